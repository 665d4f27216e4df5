package corpus_test

import (
	"testing"
	"time"

	"github.com/manifester/manifester/internal/codec"
)

// BenchmarkAlternateEncode measures what BenchmarkEncode does (the
// workload's decoded, cloned frames encoded into a reused buffer, ours
// against kmsg's AppendTo) on a shared, noisy machine: ours and kmsg's
// alternately, in chunks of about 0.3 ms, and reports the fastest chunk of
// each (ns per corpus run) and their ratio, kmsg's time over ours (above
// 1 when ours is faster). Both sides meet the same disturbances, so the
// ratio holds where the MB/s of separate runs move by 2x; run it with
// -benchtime 3s or more. (Its name keeps it out of bench/run's and the
// encode task's "BenchmarkEncode" patterns.)
func BenchmarkAlternateEncode(b *testing.B) {
	c, ws := setup(b)
	for _, w := range ws {
		ours, theirs := encodeInputs(b, c, w)
		buf := make([]byte, 0, 1<<20)
		alternate(b, w.Name, func() {
			for _, fr := range ours {
				var err error
				if buf, err = ourEncode(c, buf[:0], fr); err != nil {
					b.Fatal(err)
				}
			}
		}, func() {
			for i := range w.Frames {
				buf = kmsgEncode(buf[:0], &w.Frames[i], theirs[i])
			}
		})
	}
}

// BenchmarkAlternateDecode does for the plain decode (BenchmarkDecode's
// "manifester" and "kmsg") what BenchmarkAlternateEncode does for the
// encode: ours and kmsg's alternately, in chunks of about 0.3 ms, the
// fastest chunk of each and their ratio, kmsg's time over ours.
func BenchmarkAlternateDecode(b *testing.B) {
	c, ws := setup(b)
	for _, w := range ws {
		alternate(b, w.Name, func() {
			for i := range w.Frames {
				if _, err := ourDecode(c, &w.Frames[i], codec.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		}, func() {
			for i := range w.Frames {
				if _, err := kmsgDecode(&w.Frames[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// alternate runs ours and kmsg's corpus runs in turn, in chunks of n
// runs each (n grown until ours takes 0.3 ms), and reports the fastest
// chunk of each and their ratio.
func alternate(b *testing.B, name string, ours, kmsg func()) {
	chunk := func(run func(), n int) time.Duration {
		start := time.Now()
		for range n {
			run()
		}
		return time.Since(start)
	}
	b.Run(name, func(b *testing.B) {
		n := 1 // corpus runs per chunk
		for chunk(ours, n) < 300*time.Microsecond {
			n *= 2
		}
		bestOurs, bestKmsg := time.Duration(1<<62), time.Duration(1<<62)
		for b.Loop() {
			bestOurs = min(bestOurs, chunk(ours, n))
			bestKmsg = min(bestKmsg, chunk(kmsg, n))
		}
		b.ReportMetric(float64(bestOurs.Nanoseconds())/float64(n), "ours-ns/run")
		b.ReportMetric(float64(bestKmsg.Nanoseconds())/float64(n), "kmsg-ns/run")
		b.ReportMetric(float64(bestKmsg)/float64(bestOurs), "kmsg/ours")
	})
}
