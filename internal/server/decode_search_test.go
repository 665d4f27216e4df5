package server

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/manifester/manifester/internal/report"
)

// TestDecodeSearchLean: of many small responses posted without their API,
// the first report.FullSearches are searched in full and the rest in
// proportion to their size, their search said to have stopped early.
func TestDecodeSearchLean(t *testing.T) {
	_, d := inflatingServer(t)
	one := binary.BigEndian.AppendUint32(nil, 10)
	one = binary.BigEndian.AppendUint32(one, 7)
	one = append(one, 0, 0, 0, 0, 0, 0) // SyncGroup v0: no error, an empty assignment
	n := report.FullSearches + 8
	fs, err := d.Decode(DecodeRequest{Kind: "response", Hex: hex.EncodeToString(bytes.Repeat(one, n))})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != n {
		t.Fatalf("%d frames, want %d", len(fs), n)
	}
	for i, f := range fs {
		if lean := i >= report.FullSearches; f.CandidatesIncomplete != lean || len(f.Candidates) == 0 && !lean {
			t.Errorf("frame %d: %d candidates, incomplete %v; want incomplete %v", i, len(f.Candidates), f.CandidatesIncomplete, lean)
		}
	}
}
