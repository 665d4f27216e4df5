package capdecode

import (
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/capture"
)

func TestSkipped(t *testing.T) {
	if got := Skipped(capture.Stats{Packets: 10, Requests: 3}); len(got) != 0 {
		t.Errorf("nothing skipped: %q", got)
	}
	got := Skipped(capture.Stats{Undecodable: 1, Gaps: 2, GapBytes: 1460, Ignored: map[string]int64{"TLS": 1, "no payload": 2, "HTTP": 1}, Unpaired: 4})
	want := []string{"4 responses without their request", "2 gaps (1460 bytes not captured)", "4 connections ignored (2 no payload, 1 HTTP, 1 TLS)", "1 packets whose headers did not decode"}
	if !slices.Equal(got, want) {
		t.Errorf("Skipped\n got %q\nwant %q", got, want)
	}
}
