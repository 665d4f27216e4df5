package jsonr

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/report"
)

// spillFrames are frames whose lines take every path of AppendFrame: the
// benchmark corpus (every API, lean and not), frames of compressed
// batches (lines many times their frame) whole and cut short, and one cut
// by its output budget.
func spillFrames(t *testing.T) []*report.Frame {
	c, frames, _ := corpusFrames(t)
	var fs []*report.Frame
	for _, bf := range frames {
		for _, lean := range []bool{false, true} {
			o := bf.o
			o.Lean = lean
			fs = append(fs, report.Decode(c, bf.b, o))
		}
	}
	ci := inflating(t)
	for _, fr := range [][]byte{
		inflatingProduce(1, 200, 1024, hostile.Zstd, hostile.LZ4),
		inflatingProduce(3, 2000, 100, hostile.Snappy),
	} {
		fs = append(fs, report.Decode(ci, fr, report.Options{Lean: true}), report.Decode(ci, fr, report.Options{}))
		// Cut short: the tree stops at the error and the body is not
		// written, but the tree's values still copy the frame's hex.
		short := report.Decode(ci, fr[:len(fr)-10], report.Options{Lean: true})
		if short.OK() || short.BodyPending() {
			t.Fatalf("a frame cut short decodes: %v", short.Error)
		}
		fs = append(fs, short)
	}
	cut := hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(3000), 3000))
	fs = append(fs, report.Decode(ci, cut, report.Options{Lean: true, Limits: budget.Limits{Output: 100 << 10}}))
	return fs
}

// TestSpillSameLine: a line handed over in pieces is the line, byte for
// byte, whatever the piece size: every frame of spillFrames, pieces of 1
// byte (a piece at every node) to 1 MiB, with and without Continue. The
// pieces are bounded: beyond the first (the frame's fields and body),
// none is longer than At and one node, whatever the line's length. And
// the long lines did go in pieces.
func TestSpillSameLine(t *testing.T) {
	fs := spillFrames(t)
	pieced := 0
	for _, cont := range []bool{false, true} {
		for i, f := range fs {
			want, err := AppendLine([]byte("head"), f, Options{Continue: cont})
			if err != nil {
				t.Fatal(err)
			}
			if cont != (want[len("head")] == ',') {
				t.Fatalf("frame %d: Continue %v, the line starts %q", i, cont, want[:10])
			}
			for _, at := range []int{1, 300, 64 << 10, 1 << 20} {
				var got bytes.Buffer
				var sizes []int
				sp := &Spill{At: at, Write: func(b []byte) error {
					sizes = append(sizes, len(b))
					got.Write(b)
					return nil
				}}
				rest, err := AppendLine([]byte("head"), f, Options{Continue: cont, Spill: sp})
				if err != nil {
					t.Fatal(err)
				}
				got.Write(rest)
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("frame %d (%s), pieces of %d: the line differs (%d bytes, want %d)", i, f.API, at, got.Len(), len(want))
				}
				if len(want) > 4*at+8*len(f.Bytes)+(64<<10) && len(sizes) < 2 {
					t.Errorf("frame %d (%s), pieces of %d: a line of %d bytes went in %d pieces", i, f.API, at, len(want), len(sizes))
				}
				if len(sizes) > 1 {
					pieced++
				}
				// Pieces after the fields and body: at most At and one
				// node, whose value's hex is at most twice the bytes it
				// lies in (the frame's or an inflated batch's).
				inflated := 0
				if tr := f.SpanTree(); tr != nil {
					inflated, _ = tr.DetachedSize()
				}
				for k, n := range sizes {
					if k > 0 && n > at+2*max(len(f.Bytes), inflated)+(64<<10) {
						t.Errorf("frame %d (%s), pieces of %d: piece %d is %d bytes", i, f.API, at, k, n)
					}
				}
			}
		}
	}
	if pieced == 0 {
		t.Fatal("no line went in pieces")
	}
}

// TestSpillWriteError: once Write fails, no more pieces go to it, and the
// line's writer returns Write's error.
func TestSpillWriteError(t *testing.T) {
	c := inflating(t)
	f := report.Decode(c, inflatingProduce(1, 200, 1024, hostile.Snappy), report.Options{Lean: true})
	boom := errors.New("disk full")
	calls := 0
	sp := &Spill{At: 4096, Write: func(b []byte) error {
		calls++
		if calls == 2 {
			return boom
		}
		if calls > 2 {
			return fmt.Errorf("piece %d handed over after the error", calls)
		}
		return nil
	}}
	_, err := AppendLine(nil, f, Options{Spill: sp})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	if calls != 2 {
		t.Errorf("%d calls of Write, want 2", calls)
	}
}
