package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
)

// largestWrite records what is written and the longest single Write.
type largestWrite struct {
	bytes.Buffer
	largest int
}

func (w *largestWrite) Write(b []byte) (int, error) {
	w.largest = max(w.largest, len(b))
	return w.Buffer.Write(b)
}

// TestDecodePcapLongLinesInPieces: a frame of compressed batches whose
// line is many times its size (here a 70 KB Produce request, a JSON line
// of about 9 MB) is written by the emit stage in pieces as its line is
// made, not made whole by a worker; so is its text with -v, a section at
// a time. The output is the same, byte for byte, as when every frame's
// output is made whole, and no write is near the frame's output's length.
func TestDecodePcapLongLinesInPieces(t *testing.T) {
	testshared.Dir(t)
	recs := hostile.DenseRecords(15000)
	req := hostile.Produce(hostile.Batch(hostile.Snappy, recs, 15000), hostile.Batch(hostile.Zstd, recs, 15000))
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	xs := append([]pcapExchange{{req: req, resp: testframes.Response(resp, 1), key: 0, ver: 7}}, pcapExchanges()[1:]...)
	path := writePcap(t, xs, capture.PCAP, true, 0)
	run := func(spillLine int64, args ...string) *largestWrite {
		t.Helper()
		old := pcapSpillLine
		pcapSpillLine = spillLine
		defer func() { pcapSpillLine = old }()
		var out largestWrite
		var errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := Main(env, append([]string{"decode", "--spec", decSpec, "--pcap", path}, args...)); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return &out
	}
	for _, args := range [][]string{{"--format", "json"}, {"-v"}} {
		whole, pieced := run(math.MaxInt64, args...), run(pcapSpillLine, args...)
		// The first frame's output: its line, or its text up to the
		// next frame's summary (which starts with its time).
		first := whole.Bytes()
		if args[0] == "-v" {
			first = first[:bytes.Index(first, []byte("\n12:00:00.001"))]
		} else {
			first = first[:bytes.IndexByte(first, '\n')]
		}
		if len(first) < 2<<20 {
			t.Fatalf("%v: the first frame's output is %d bytes: not long enough to say anything", args, len(first))
		}
		if !bytes.Equal(pieced.Bytes(), whole.Bytes()) {
			t.Fatalf("%v: the output in pieces differs (%d bytes, whole %d)", args, pieced.Len(), whole.Len())
		}
		if whole.largest < len(first) {
			t.Fatalf("%v: made whole, the long frame went in writes of at most %d bytes: the test says nothing", args, whole.largest)
		}
		if pieced.largest > len(first)/2 {
			t.Errorf("%v: a frame's output of %d bytes: a write of %d bytes", args, len(first), pieced.largest)
		}
		t.Logf("%v: a frame's output of %d bytes; largest write %d bytes in pieces, %d whole", args, len(first), pieced.largest, whole.largest)
	}
}
