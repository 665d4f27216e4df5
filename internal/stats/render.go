package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/term"
)

// WriteJSON writes the summary as one JSON document.
func (s *Summary) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// errorList renders an API's errors, most frequent first, at most limit
// names (0: all) and then how many more there are:
// "NOT_LEADER_OR_FOLLOWER×3, REQUEST_TIMED_OUT×1, +4 others ×6".
func errorList(errs map[string]int64, limit int) string {
	if len(errs) == 0 {
		return "-"
	}
	names := make([]string, 0, len(errs))
	for n := range errs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if errs[names[i]] != errs[names[j]] {
			return errs[names[i]] > errs[names[j]]
		}
		return names[i] < names[j]
	})
	shown := names
	if limit > 0 && len(names) > limit {
		shown = names[:limit]
	}
	parts := make([]string, len(shown), len(shown)+1)
	for i, n := range shown {
		parts[i] = n + "×" + strconv.FormatInt(errs[n], 10)
	}
	if len(shown) < len(names) {
		var rest int64
		for _, n := range names[len(shown):] {
			rest += errs[n]
		}
		parts = append(parts, fmt.Sprintf("+%d others ×%d", len(names)-len(shown), rest))
	}
	return strings.Join(parts, ", ")
}

// apiLabel is "Produce(0)", or "api_key 0" for a key the spec does not name.
func apiLabel(a *APIStats) string {
	if a.Name == "" {
		return "api_key " + strconv.Itoa(int(a.APIKey))
	}
	return safe(a.Name) + "(" + strconv.Itoa(int(a.APIKey)) + ")"
}

// table writes rows with columns padded to their widest cell, counted in
// terminal cells (a client id in CJK takes two a character); numeric
// columns (right[i]) are right-aligned, and the last column is not padded.
func table(b *strings.Builder, rows [][]string, right []bool) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], term.Width(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-term.Width(c))
			if i > 0 {
				line.WriteString("  ")
			}
			switch {
			case right[i]:
				line.WriteString(pad + c)
			case i == len(r)-1:
				line.WriteString(c)
			default:
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// safe returns s, or s quoted when it holds characters a terminal could
// act on (JSON-lines input may carry anything).
func safe(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

// textErrorNames is how many error names a text row lists (the JSON has
// them all).
const textErrorNames = 3

// WriteText writes the summary as two aligned tables (APIs, then
// connections) for a terminal. Strings from the traffic (client ids) are
// quoted, so control characters cannot reach the terminal.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(s.APIs) == 0 {
		b.WriteString("no requests or paired responses\n")
	} else {
		rows := [][]string{{"API", "VERSION", "REQUESTS", "RESPONSES", "UNANSWERED", "REQ BYTES", "RESP BYTES", "P50 µs", "P99 µs", "MAX µs", "ERRORS"}}
		for i := range s.APIs {
			a := &s.APIs[i]
			p50, p99, mx := "-", "-", "-"
			if a.Latency != nil {
				p50, p99, mx = num(a.Latency.P50), num(a.Latency.P99), num(a.Latency.Max)
			}
			errs := errorList(a.Errors, textErrorNames)
			if a.Undecoded > 0 {
				errs += " (" + num(a.Undecoded) + " responses did not decode)"
			}
			rows = append(rows, []string{apiLabel(a), "v" + strconv.Itoa(int(a.Version)), num(a.Requests), num(a.Responses), num(a.Unanswered),
				num(a.Bytes.Request), num(a.Bytes.Response), p50, p99, mx, errs})
		}
		table(&b, rows, []bool{false, true, true, true, true, true, true, true, true, true, false})
	}
	if len(s.Connections) > 0 {
		b.WriteString("\n")
		rows := [][]string{{"CONN", "CLIENT", "SERVER", "CLIENT ID", "FRAMES"}}
		for _, c := range s.Connections {
			id := "-"
			if c.ClientID != nil {
				id = strconv.Quote(*c.ClientID)
			}
			rows = append(rows, []string{num(int64(c.ID)), safe(c.Client), safe(c.Server), id, num(c.Frames)})
		}
		table(&b, rows, []bool{true, false, false, false, true})
	}
	if o := s.Omitted; o != nil {
		b.WriteString(omittedLine(o) + "\n")
	}
	if s.UnpairedResponses > 0 {
		their := "their"
		if s.UnpairedResponses == 1 {
			their = "its"
		}
		b.WriteString("\n" + english.Count(s.UnpairedResponses, "response") + " without " + their + " request (not captured): API and version unknown, not counted above\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// omittedLine says what a summary's connection table leaves out: "and
// 98,765 more connections (1,234,567 frames), fewer frames each than
// those listed".
func omittedLine(o *Omitted) string {
	line := "and " + english.Count(o.Connections, "more connection") + " (" + english.Count(o.Frames, "frame")
	if o.Unpaired > 0 {
		line += ", " + english.Count(o.Unpaired, "response") + " without a request"
	}
	return line + "), with no more frames each than those listed"
}
