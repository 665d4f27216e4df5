package capdecode

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/manifester/manifester/internal/capture"
)

// Skipped says what a read of a capture could not read, as the parts of a
// summary line: every count of st that is not zero, in one fixed order,
// e.g. "2 gaps (1460 bytes not captured)", "1 connections ignored (1
// TLS)". Nothing the reader skipped goes unsaid.
func Skipped(st capture.Stats) []string {
	var out []string
	for _, c := range []struct {
		n            int64
		text, detail string
	}{
		{st.Unpaired, "%d responses without their request", ""},
		{st.Gaps, "%d gaps", fmt.Sprintf(" (%d bytes not captured)", st.GapBytes)},
		{st.CutFrames, "%d frames cut by gaps or the end", ""},
		{st.SkippedBytes, "%d stream bytes skipped", ""},
		{st.RetransmittedBytes, "%d retransmitted bytes dropped as duplicates", ""},
		{st.LateBytes, "%d bytes arrived after their gap was declared (the capture reordered them)", ""},
		{ignoredTotal(st.Ignored), "%d connections ignored", " (" + ignoredText(st.Ignored) + ")"},
		{st.Suspect, "%d connections decoded although their first request failed the framing checks", ""},
		{st.OtherPorts, "%d TCP packets on other ports", ""},
		{st.NotTCP, "%d packets not TCP", ""},
		{st.Fragments, "%d IP fragments skipped", ""},
		{st.Undecodable, "%d packets whose headers did not decode", ""},
	} {
		if c.n != 0 {
			out = append(out, fmt.Sprintf(c.text, c.n)+c.detail)
		}
	}
	return out
}

func ignoredTotal(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// ignoredText lists the reasons connections were ignored, most common
// first: "2 TLS, 1 no payload".
func ignoredText(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}
