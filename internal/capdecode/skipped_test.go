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
	want := []string{"4 responses without their request", "2 gaps (1460 bytes not captured)", "4 connections ignored (2 no payload, 1 HTTP, 1 TLS)", "1 packet whose headers did not decode"}
	if !slices.Equal(got, want) {
		t.Errorf("Skipped\n got %q\nwant %q", got, want)
	}
}

// TestSkippedOne: a count of one reads in the singular, its words too.
func TestSkippedOne(t *testing.T) {
	got := Skipped(capture.Stats{Unpaired: 1, Gaps: 1, GapBytes: 1, CutFrames: 1, SkippedBytes: 1, RetransmittedBytes: 1,
		LateBytes: 1, Ignored: map[string]int64{"TLS": 1}, Suspect: 1, OtherPorts: 1, NotTCP: 1, Fragments: 1, Undecodable: 1, Oversized: 1,
		OtherLinks: map[string]int64{"link type 147": 1}})
	want := []string{
		"1 response without its request",
		"1 gap (1 byte not captured)",
		"1 frame cut by gaps or the end",
		"1 stream byte skipped",
		"1 retransmitted byte dropped as a duplicate",
		"1 byte arrived after its gap was declared (the capture reordered it)",
		"1 connection ignored (1 TLS)",
		"1 connection decoded although its first request failed the framing checks",
		"1 TCP packet on other ports",
		"1 packet not TCP",
		"1 IP fragment skipped",
		"1 packet whose headers did not decode",
		"1 packet longer than 262144 bytes skipped unread",
		"1 packet of a link type not read (1 link type 147)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Skipped\n got %q\nwant %q", got, want)
	}
}

// TestPackets: the packet count says how many of its TCP packets came out
// of tunnels, by kind, and says nothing of tunnels when none did.
func TestPackets(t *testing.T) {
	for _, c := range []struct {
		st   capture.Stats
		want string
	}{
		{capture.Stats{Packets: 1}, "1 packet"},
		{capture.Stats{Packets: 12, Tunnels: map[string]int64{}}, "12 packets"},
		{capture.Stats{Packets: 12, Tunnels: map[string]int64{capture.TunnelGRE: 2, capture.TunnelVXLAN: 8}}, "12 packets (10 from tunnels: 8 VXLAN, 2 GRE)"},
	} {
		if got := packets(c.st); got != c.want {
			t.Errorf("packets(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
}

// TestSummary: the counts, then the caller's parts, then what was
// skipped, one comma-separated line.
func TestSummary(t *testing.T) {
	st := capture.Stats{Packets: 9, Connections: 1, Requests: 3, Responses: 2, NotTCP: 2, Tunnels: map[string]int64{capture.TunnelGeneve: 7}}
	want := "9 packets (7 from tunnels: 7 Geneve), 1 connection, 3 requests, 2 responses, 1 request without a response, 2 packets not TCP"
	if got := Summary(st, "1 request without a response"); got != want {
		t.Errorf("Summary\n got %q\nwant %q", got, want)
	}
	if got := Summary(capture.Stats{}); got != "0 packets, 0 connections, 0 requests, 0 responses" {
		t.Errorf("empty: %q", got)
	}
}

// TestSkippedTLS: what a read did with TLS is said: the connections
// decrypted beside the count of connections, and every byte not
// decrypted with each reason (directions stopped, records cut by gaps
// that decryption crossed, records cut by the end), and the secrets
// blocks it could not use.
func TestSkippedTLS(t *testing.T) {
	st := capture.Stats{Connections: 3, TLS: capture.TLSStats{Connections: 4, Decrypted: 2, Undecrypted: 5000, AtEnd: 40, Resynced: 2,
		Stopped: map[string]int64{"no key in the key log": 2, "gap in the TLS stream": 1}, OtherSecrets: 1, SecretsSkipped: 2, SecretsError: "pcapng block at offset 96: too large"}}
	want := []string{
		"5000 TLS bytes not decrypted (3 directions stopped: 2 no key in the key log, 1 gap in the TLS stream; records cut by 2 gaps, decrypted again after them; records cut by the end)",
		"1 pcapng secrets block of another kind than a TLS key log ignored",
		"2 pcapng key log blocks not read (the capture's key logs passed 16 MiB)",
		"secrets blocks not read past a bad one (pcapng block at offset 96: too large)",
	}
	if got := Skipped(st); !slices.Equal(got, want) {
		t.Errorf("Skipped\n got %q\nwant %q", got, want)
	}
	if got, want := connections(st), "3 connections (2 TLS connections decrypted)"; got != want {
		t.Errorf("connections: %q, want %q", got, want)
	}
	st = capture.Stats{Connections: 1, TLS: capture.TLSStats{Decrypted: 1, Undecrypted: 30, Resynced: 1}}
	if got, want := Skipped(st), []string{"30 TLS bytes not decrypted (records cut by 1 gap, decrypted again after it)"}; !slices.Equal(got, want) {
		t.Errorf("Skipped\n got %q\nwant %q", got, want)
	}
}
