package capdecode

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/english"
)

// Skipped says what a read of a capture could not read, as the parts of a
// summary line: every count of st that is not zero, in one fixed order,
// e.g. "2 gaps (1460 bytes not captured)", "1 connection ignored (1
// TLS)". Nothing the reader skipped goes unsaid.
func Skipped(st capture.Stats) []string {
	var out []string
	for _, c := range []struct {
		n int64
		// noun is counted; rest follows it, restOne when n is 1.
		noun, rest, restOne string
	}{
		{st.Unpaired, "response", " without their request", " without its request"},
		{st.Gaps, "gap", " (" + english.Count(st.GapBytes, "byte") + " not captured)", ""},
		{st.CutFrames, "frame", " cut by gaps or the end", ""},
		{st.SkippedBytes, "stream byte", " skipped", ""},
		{st.RetransmittedBytes, "retransmitted byte", " dropped as duplicates", " dropped as a duplicate"},
		{st.LateBytes, "byte", " arrived after their gap was declared (the capture reordered them)", " arrived after its gap was declared (the capture reordered it)"},
		{countTotal(st.Ignored), "connection", " ignored (" + countText(st.Ignored) + ")", ""},
		{st.TLS.Undecrypted, "TLS byte", " not decrypted" + tlsWhy(st.TLS), ""},
		{st.TLS.OtherSecrets, "pcapng secrets block", " of another kind than a TLS key log ignored", ""},
		{st.TLS.SecretsSkipped, "pcapng key log block", " not read (the capture's key logs passed 16 MiB)", ""},
		{st.Evicted, "connection", " finished early (more were open at once than --max-conns follows; the quietest went)", ""},
		{st.Suspect, "connection", " decoded although their first request failed the framing checks", " decoded although its first request failed the framing checks"},
		{st.OtherPorts, "TCP packet", " on other ports", ""},
		{st.NotTCP, "packet", " not TCP", ""},
		{st.Fragments, "IP fragment", " skipped", ""},
		{st.Undecodable, "packet", " whose headers did not decode", ""},
		{st.Oversized, "packet", fmt.Sprintf(" longer than %d bytes skipped unread", capture.MaxPacket), ""},
		{countTotal(st.OtherLinks), "packet", " of link types not read (" + countText(st.OtherLinks) + ")", " of a link type not read (" + countText(st.OtherLinks) + ")"},
	} {
		if c.n == 0 {
			continue
		}
		rest := c.rest
		if c.n == 1 && c.restOne != "" {
			rest = c.restOne
		}
		out = append(out, english.Count(c.n, c.noun)+rest)
	}
	if st.TLS.SecretsError != "" {
		out = append(out, "secrets blocks not read past a bad one ("+st.TLS.SecretsError+")")
	}
	return out
}

// Summary is the line that sums a read of a capture up: its packets,
// connections, requests and responses, then the parts of extra, then
// everything [Skipped] says, joined by commas ("1200 packets, 1
// connection, 3 requests, 3 responses, 1 gap (1460 bytes not captured)").
func Summary(st capture.Stats, extra ...string) string {
	parts := append([]string{packets(st), connections(st),
		english.Count(st.Requests, "request"), english.Count(st.Responses, "response")}, extra...)
	return strings.Join(append(parts, Skipped(st)...), ", ")
}

// packets says how many packets a capture held and, when some of its TCP
// came out of tunnels, how many and which: "1200 packets (800 from
// tunnels: 800 VXLAN)".
func packets(st capture.Stats) string {
	s := english.Count(st.Packets, "packet")
	if n := countTotal(st.Tunnels); n > 0 {
		s += " (" + fmt.Sprint(n) + " from tunnels: " + countText(st.Tunnels) + ")"
	}
	return s
}

// connections says how many connections carried Kafka and, when the read
// decrypted TLS, how many TLS connections it decrypted: "3 connections
// (2 TLS connections decrypted)".
func connections(st capture.Stats) string {
	s := english.Count(st.Connections, "connection")
	if n := st.TLS.Decrypted; n > 0 {
		s += " (" + english.Count(n, "TLS connection") + " decrypted)"
	}
	return s
}

// tlsWhy says why TLS bytes were not decrypted: " (2 directions
// stopped: 1 gap in the TLS stream, 1 no key in the key log; records cut
// by 1 gap, decrypted again after it; records cut by the end)".
func tlsWhy(t capture.TLSStats) string {
	var why []string
	if n := countTotal(t.Stopped); n > 0 {
		why = append(why, english.Count(n, "direction")+" stopped: "+countText(t.Stopped))
	}
	if t.Resynced > 0 {
		after := "it"
		if t.Resynced > 1 {
			after = "them"
		}
		why = append(why, "records cut by "+english.Count(t.Resynced, "gap")+", decrypted again after "+after)
	}
	if t.AtEnd > 0 {
		why = append(why, "records cut by the end")
	}
	return " (" + strings.Join(why, "; ") + ")"
}

// countTotal adds up the counts of m.
func countTotal(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// countText lists the counts of m, most common first: "2 TLS, 1 no
// payload".
func countText(m map[string]int64) string {
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
