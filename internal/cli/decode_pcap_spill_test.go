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
// line is many times its size (here a 70 KB Produce request, a line of
// about 7 MB) is written by the emit stage in pieces as its line is made,
// not made whole by a worker: the output is the same, byte for byte, as
// when every line is made whole, and no write is near the line's length.
func TestDecodePcapLongLinesInPieces(t *testing.T) {
	testshared.Dir(t)
	recs := hostile.DenseRecords(15000)
	req := hostile.Produce(hostile.Batch(hostile.Snappy, recs, 15000), hostile.Batch(hostile.Zstd, recs, 15000))
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	xs := append([]pcapExchange{{req: req, resp: testframes.Response(resp, 1), key: 0, ver: 7}}, pcapExchanges()[1:]...)
	path := writePcap(t, xs, capture.PCAP, true, 0)
	run := func(spillLine int64) *largestWrite {
		t.Helper()
		old := pcapSpillLine
		pcapSpillLine = spillLine
		defer func() { pcapSpillLine = old }()
		var out largestWrite
		var errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := Main(env, []string{"decode", "--spec", decSpec, "--pcap", path, "--format", "json"}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return &out
	}
	whole, pieced := run(math.MaxInt64), run(pcapSpillLine)
	lines := bytes.Split(bytes.TrimSuffix(whole.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 2*len(xs) || len(lines[0]) < 5<<20 {
		t.Fatalf("%d lines, the first of %d bytes: want %d, the first of megabytes", len(lines), len(lines[0]), 2*len(xs))
	}
	if !bytes.Equal(pieced.Bytes(), whole.Bytes()) {
		t.Fatalf("the output in pieces differs (%d bytes, whole %d)", pieced.Len(), whole.Len())
	}
	if whole.largest < len(lines[0]) {
		t.Fatalf("made whole, the long line went in writes of at most %d bytes: the test says nothing", whole.largest)
	}
	if pieced.largest > len(lines[0])/4 {
		t.Errorf("a line of %d bytes: a write of %d bytes", len(lines[0]), pieced.largest)
	}
	t.Logf("a line of %d bytes; largest write %d bytes in pieces, %d whole", len(lines[0]), pieced.largest, whole.largest)
}
