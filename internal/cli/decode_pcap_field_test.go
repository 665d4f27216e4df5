package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
)

// fieldLine is a JSON line with the fields captures from the field add.
type fieldLine struct {
	Kind          string          `json:"kind"`
	APIKey        *int16          `json:"api_key"`
	API           string          `json:"api"`
	Version       *int16          `json:"version"`
	CorrelationID int32           `json:"correlation_id"`
	ClientID      *string         `json:"client_id"`
	Size          int             `json:"size"`
	LatencyMicros *int64          `json:"latency_us"`
	Error         *string         `json:"error"`
	Warning       string          `json:"warning"`
	Note          string          `json:"note"`
	Roundtrip     *bool           `json:"roundtrip"`
	Body          json.RawMessage `json:"body"`
	Gap           *struct {
		Offset    int64 `json:"offset"`
		Size      int64 `json:"size"`
		FrameSize int64 `json:"frame_size"`
		Captured  int   `json:"captured"`
	} `json:"gap"`
	Candidates []struct {
		APIKey  int16  `json:"api_key"`
		Name    string `json:"name"`
		Version int16  `json:"version"`
	} `json:"candidates"`
}

func fieldLines(t *testing.T, out string) []fieldLine {
	t.Helper()
	var ls []fieldLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var f fieldLine
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("not a JSON line: %v: %.200s", err, l)
		}
		ls = append(ls, f)
	}
	return ls
}

// script writes one connection: each element is a frame (requests even,
// responses odd within an exchange) written as segments; drop names the
// frames whose first segment is not captured.
type scriptFrame struct {
	dir  capture.Dir
	data []byte
	drop bool // the frame's segments are lost (the peer still got them)
}

func writeScript(t *testing.T, open bool, frames []scriptFrame) string {
	t.Helper()
	var buf bytes.Buffer
	w, _ := capture.NewWriter(&buf, capture.PCAP)
	c := w.Conn(pcapClient, pcapServer)
	if open {
		if err := c.Open(pcapT0); err != nil {
			t.Fatal(err)
		}
	}
	at := pcapT0
	for _, f := range frames {
		at = at.Add(time.Millisecond)
		if f.drop {
			c.Skip(f.dir, len(f.data))
			continue
		}
		if err := c.Write(f.dir, at, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func exchangeFrames(xs []pcapExchange) []scriptFrame {
	var out []scriptFrame
	for _, x := range xs {
		out = append(out, scriptFrame{dir: capture.ClientToServer, data: x.req}, scriptFrame{dir: capture.ServerToClient, data: x.resp})
	}
	return out
}

// TestDecodePcapUnicodeClientID: a client id of valid UTF-8 beyond ASCII
// does not make the connection vanish, with or without the handshake.
func TestDecodePcapUnicodeClientID(t *testing.T) {
	const id = "Zürich-日本-consumer"
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID(id))
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version = 4
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version = 12
	xs := []pcapExchange{{f.AppendRequest(nil, hb, 1), testframes.Response(hbr, 1), 12, 4}, {f.AppendRequest(nil, md, 2), testframes.Response(mdr, 2), 3, 12}}
	for _, open := range []bool{true, false} {
		path := writeScript(t, open, exchangeFrames(xs))
		code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--roundtrip")
		if code != 0 {
			t.Fatalf("handshake %v: exit %d: %s", open, code, errOut)
		}
		ls := fieldLines(t, out)
		if len(ls) != 4 {
			t.Fatalf("handshake %v: %d frames, want 4: %s", open, len(ls), errOut)
		}
		for i, l := range ls {
			if l.Error != nil || l.Roundtrip == nil || !*l.Roundtrip {
				t.Errorf("handshake %v: frame %d: %+v", open, i, l)
			}
			if l.Kind == "request" && (l.ClientID == nil || *l.ClientID != id) {
				t.Errorf("handshake %v: frame %d: client id %v", open, i, l.ClientID)
			}
		}
	}
}

// TestDecodePcapLostSegments: a lost request and a lost segment inside a
// response cost only their frames: the cut response is reported with its
// gap, the response to the lost request lists candidates (its true API
// and version first, ranked by the Heartbeats before it), everything else
// decodes and is paired, and the exit status is 0.
func TestDecodePcapLostSegments(t *testing.T) {
	xs := pcapExchanges() // ApiVersions, Metadata (several segments), Heartbeat
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("pcap-test"))
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version, hbr.ErrorCode = 4, 27
	xs = append(xs, pcapExchange{f.AppendRequest(nil, hb, 4), testframes.Response(hbr, 4), 12, 4})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	xs = append(xs, pcapExchange{f.AppendRequest(nil, md, 5), xs[1].resp, 3, 12})
	// Make the last response a Metadata response with correlation id 5.
	xs[4].resp = bytes.Clone(xs[4].resp)
	xs[4].resp[7] = 5
	frames := exchangeFrames(xs)
	frames[6].drop = true // the second Heartbeat request (correlation id 4)
	// A segment inside the first Metadata response: write it by hand.
	var buf bytes.Buffer
	w, _ := capture.NewWriter(&buf, capture.PCAP)
	c := w.Conn(pcapClient, pcapServer)
	c.Open(pcapT0)
	at := pcapT0
	for i, fr := range frames {
		at = at.Add(time.Millisecond)
		switch {
		case fr.drop:
			c.Skip(fr.dir, len(fr.data))
		case i == 3: // Metadata response: lose bytes 1448..2895
			c.Write(fr.dir, at, fr.data[:1448])
			c.Skip(fr.dir, 1448)
			c.Write(fr.dir, at, fr.data[2896:])
		default:
			c.Write(fr.dir, at, fr.data)
		}
	}
	c.Close(at)
	path := filepath.Join(t.TempDir(), "lost.pcap")
	os.WriteFile(path, buf.Bytes(), 0o644)

	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--roundtrip")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ls := fieldLines(t, out)
	if len(ls) != 9 {
		t.Fatalf("%d frames, want 9 (all but the lost request):\n%s", len(ls), out)
	}
	for i, l := range ls {
		switch i {
		case 3: // the cut Metadata response
			if l.Gap == nil || l.Gap.Size != 1448 || l.Gap.Captured != 1448 || l.Gap.FrameSize != int64(len(xs[1].resp)) ||
				!strings.Contains(l.Warning, "gap") || l.Error != nil || l.API != "Metadata" || l.LatencyMicros == nil {
				t.Errorf("cut frame: %+v", l)
			}
		case 6: // the answer to the lost Heartbeat request
			if l.APIKey != nil || l.Version != nil || l.API != "" || l.Error != nil || !strings.Contains(l.Warning, "correlation id 4") {
				t.Errorf("orphan: %+v", l)
			}
			if len(l.Candidates) == 0 || l.Candidates[0].APIKey != 12 || l.Candidates[0].Version != 4 || l.Candidates[0].Name != "Heartbeat" {
				t.Errorf("orphan candidates: %+v", l.Candidates)
			}
		default:
			if l.Error != nil || l.Roundtrip == nil || !*l.Roundtrip || l.Gap != nil {
				t.Errorf("frame %d: %+v", i, l)
			}
			if l.Kind == "response" && l.LatencyMicros == nil {
				t.Errorf("frame %d: unpaired", i)
			}
		}
	}
	gaps := fmt.Sprintf("2 gaps (%d bytes not captured)", 1448+len(xs[3].req))
	for _, want := range []string{"1 response without its request", gaps, "1 frame cut", "2 of 9 frames with warnings"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
	// Text names the candidates.
	_, out, _ = decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path)
	if !strings.Contains(out, "response (API unknown: request not captured) correlation_id 4") || !strings.Contains(out, "candidates (decode cleanly and re-encode byte for byte): Heartbeat(12) v4") {
		t.Errorf("text output:\n%s", out)
	}
}

// TestDecodePcapOrphanCandidates: with no neighbouring request to rank
// them, the true (API, version) of a response whose request was lost is
// still among its candidates, for several APIs.
func TestDecodePcapOrphanCandidates(t *testing.T) {
	for i, x := range pcapExchanges() {
		frames := []scriptFrame{{dir: capture.ClientToServer, data: x.req, drop: true}, {dir: capture.ServerToClient, data: x.resp}}
		path := writeScript(t, true, frames)
		code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
		ls := fieldLines(t, out)
		if code != 0 || len(ls) != 1 {
			t.Fatalf("exchange %d: exit %d, %d lines: %s", i, code, len(ls), errOut)
		}
		found := false
		for _, c := range ls[0].Candidates {
			found = found || c.APIKey == x.key && c.Version == x.ver
		}
		if !found || ls[0].APIKey != nil {
			t.Errorf("exchange %d: %d v%d not among the candidates %+v", i, x.key, x.ver, ls[0].Candidates)
		}
	}
}

// TestDecodePcapNewerClient: an ApiVersions v5 probe (newer than the 4.3
// spec) is a warning with its header decoded, the broker's v0
// UNSUPPORTED_VERSION answer decodes as v0, and the connection goes on.
func TestDecodePcapNewerClient(t *testing.T) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kgo"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 5, "kgo", "1"
	probe := f.AppendRequest(nil, av, 0)
	if probe[7] != 5 {
		t.Fatalf("kmsg wrote ApiVersions v%d", probe[7])
	}
	answer := kmsg.NewPtrApiVersionsResponse()
	answer.Version, answer.ErrorCode = 0, 35
	answer.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 4}}
	xs := append([]pcapExchange{{probe, testframes.Response(answer, 0), 18, 5}}, pcapExchanges()...)
	path := writeScript(t, true, exchangeFrames(xs))
	for _, port := range []string{"", "9092"} {
		args := []string{"decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--roundtrip"}
		if port != "" {
			args = append(args, "--port", port)
		}
		code, out, errOut := decRun(t, nil, args...)
		if code != 0 {
			t.Fatalf("port %q: exit %d: %s", port, code, errOut)
		}
		ls := fieldLines(t, out)
		if len(ls) != 8 {
			t.Fatalf("port %q: %d frames, want 8", port, len(ls))
		}
		p, a := ls[0], ls[1]
		if p.Error != nil || !strings.Contains(p.Warning, "ApiVersions v5 is newer than this spec (0-4); the broker will answer it as v0") ||
			p.ClientID == nil || *p.ClientID != "kgo" || p.Body != nil {
			t.Errorf("port %q: probe %+v", port, p)
		}
		if a.Error != nil || a.Version == nil || *a.Version != 0 || !strings.Contains(a.Note, "read as v0") || a.Roundtrip == nil || !*a.Roundtrip ||
			!strings.Contains(string(a.Body), `"ErrorCode":35`) {
			t.Errorf("port %q: answer %+v %s", port, a, a.Body)
		}
		for i, l := range ls[2:] {
			if l.Error != nil || l.Warning != "" || l.Roundtrip == nil || !*l.Roundtrip {
				t.Errorf("port %q: frame %d: %+v", port, i+2, l)
			}
		}
		if !strings.Contains(errOut, "1 of 8 frames with warnings") {
			t.Errorf("port %q: stderr %s", port, errOut)
		}
	}
}

// TestDecodePcapIgnoredConnections: connections without Kafka are
// counted in the summary with the reason.
func TestDecodePcapIgnoredConnections(t *testing.T) {
	var buf bytes.Buffer
	w, _ := capture.NewWriter(&buf, capture.PCAP)
	k := w.Conn(pcapClient, pcapServer)
	h := w.Conn(netip.MustParseAddrPort("10.0.0.1:52000"), netip.MustParseAddrPort("10.0.0.3:80"))
	e := w.Conn(netip.MustParseAddrPort("10.0.0.1:52001"), netip.MustParseAddrPort("10.0.0.3:9092"))
	for _, c := range []*capture.ConnWriter{k, h, e} {
		c.Open(pcapT0)
	}
	h.Write(capture.ClientToServer, pcapT0, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	for _, x := range pcapExchanges() {
		k.Write(capture.ClientToServer, pcapT0, x.req)
		k.Write(capture.ServerToClient, pcapT0, x.resp)
	}
	for _, c := range []*capture.ConnWriter{k, h, e} {
		c.Close(pcapT0)
	}
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	os.WriteFile(path, buf.Bytes(), 0o644)
	code, _, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path)
	if code != 0 || !strings.Contains(errOut, "1 connection, 3 requests, 3 responses") || !strings.Contains(errOut, "2 connections ignored (1 HTTP, 1 no payload)") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// lineSignal is a goroutine-safe writer that reports its first line.
type lineSignal struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
	line chan struct{}
}

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if bytes.Contains(l.buf.Bytes(), []byte("\n")) {
		l.once.Do(func() { close(l.line) })
	}
	return len(p), nil
}

func (l *lineSignal) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// streamGuard is how long the stdin test waits for a frame before it
// calls decode --pcap - stuck.
var streamGuard = 2 * time.Minute

// TestDecodePcapStdinStreams: --pcap - reads pcap and pcapng from
// standard input and writes each frame before the input ends, and so
// does - alone (a capture told by its first bytes): the test writes the
// first exchange into a pipe, waits for its first line of output, and
// only then writes the rest and closes the pipe.
func TestDecodePcapStdinStreams(t *testing.T) {
	for _, tc := range []struct {
		format capture.Format
		input  []string
	}{
		{capture.PCAP, []string{"--pcap", "-"}}, {capture.PCAPNG, []string{"--pcap", "-"}},
		{capture.PCAP, []string{"-"}}, {capture.PCAPNG, []string{"-"}},
	} {
		format := tc.format
		pr, pw := io.Pipe()
		out := &lineSignal{line: make(chan struct{})}
		var errOut bytes.Buffer
		env := &Env{Stdin: pr, Stdout: out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		done := make(chan int, 1)
		go func() {
			done <- Main(env, append([]string{"decode", "--spec", decSpec, "--format", "json"}, tc.input...))
			pr.Close()
		}()
		w, err := capture.NewWriter(pw, format)
		if err != nil {
			t.Fatal(err)
		}
		c := w.Conn(pcapClient, pcapServer)
		xs := pcapExchanges()
		c.Open(pcapT0)
		c.Write(capture.ClientToServer, pcapT0, xs[0].req)
		c.Write(capture.ServerToClient, pcapT0, xs[0].resp)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-out.line:
		case code := <-done:
			t.Fatalf("format %d: decode ended (exit %d) before the input did: %s", format, code, errOut.String())
		case <-time.After(streamGuard):
			// A guard against a hang, not a speed check: the frame is
			// due long before.
			t.Fatalf("format %d: no frame written while the input stays open", format)
		}
		if n := len(fieldLines(t, out.String())); n < 1 {
			t.Fatalf("format %d: no frame before the rest of the input", format)
		}
		for _, x := range xs[1:] {
			c.Write(capture.ClientToServer, pcapT0, x.req)
			c.Write(capture.ServerToClient, pcapT0, x.resp)
		}
		c.Close(pcapT0)
		w.Flush()
		pw.Close()
		if code := <-done; code != 0 {
			t.Fatalf("format %d: exit %d: %s", format, code, errOut.String())
		}
		if ls := fieldLines(t, out.String()); len(ls) != 6 {
			t.Errorf("format %d: %d frames, want 6", format, len(ls))
		}
		if !strings.Contains(errOut.String(), "stdin: ") {
			t.Errorf("format %d: stderr %s", format, errOut.String())
		}
	}
}

// TestDecodePcapMidConnectionLocksOn: a capture that begins at a frame
// boundary, between a request and its response, locks on at the first
// byte of both halves: the first response, whose request is not in the
// capture, is an orphan with its true API among the candidates, not
// skipped bytes.
func TestDecodePcapMidConnectionLocksOn(t *testing.T) {
	xs := pcapExchanges()
	frames := exchangeFrames(xs)
	frames[0].drop = true // sent before the capture began
	for _, port := range [][]string{nil, {"--port", "9092"}} {
		path := writeScript(t, false, frames)
		args := append([]string{"decode", "--spec", decSpec, "--pcap", path, "--format", "json"}, port...)
		code, out, errOut := decRun(t, nil, args...)
		ls := fieldLines(t, out)
		if code != 0 || len(ls) != 5 || strings.Contains(errOut, "skipped") {
			t.Fatalf("%v: exit %d, %d frames: %s", port, code, len(ls), errOut)
		}
		o := ls[0]
		if o.Kind != "response" || o.APIKey != nil || len(o.Candidates) == 0 {
			t.Fatalf("%v: first frame %+v", port, o)
		}
		found := false
		for _, c := range o.Candidates {
			found = found || c.APIKey == 18 && c.Version == 3
		}
		if !found {
			t.Errorf("%v: ApiVersions v3 not among %+v", port, o.Candidates)
		}
		for i, l := range ls[1:] {
			if l.Error != nil || l.Warning != "" || (l.Kind == "response" && l.LatencyMicros == nil) {
				t.Errorf("%v: frame %d: %+v", port, i+1, l)
			}
		}
	}
}

// TestDecodePcapAPINewerThanSpec: decoded with the 3.9 spec, a capture
// with an API that 3.9 lacks (StreamsGroupDescribe, key 89) gives warnings
// for the request and its answer, and the connection goes on; the 4.3
// spec decodes the same frames.
func TestDecodePcapAPINewerThanSpec(t *testing.T) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("admin"))
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version = 4
	lc := kmsg.NewPtrStreamsGroupDescribeRequest()
	lc.Version, lc.Groups = 0, []string{"s"}
	lcr := kmsg.NewPtrStreamsGroupDescribeResponse()
	lcr.Version = 0
	xs := []pcapExchange{{f.AppendRequest(nil, hb, 1), testframes.Response(hbr, 1), 12, 4}, {f.AppendRequest(nil, lc, 2), testframes.Response(lcr, 2), 89, 0},
		{f.AppendRequest(nil, hb, 3), testframes.Response(hbr, 3), 12, 4}}
	path := writeScript(t, true, exchangeFrames(xs))
	code, out, errOut := decRun(t, nil, "decode", "--spec", testshared.Spec(t, "3.9"), "--pcap", path, "--format", "json")
	ls := fieldLines(t, out)
	if code != 0 || len(ls) != 6 || !strings.Contains(errOut, "2 of 6 frames with warnings") {
		t.Fatalf("3.9: exit %d, %d frames: %s", code, len(ls), errOut)
	}
	if !strings.Contains(ls[2].Warning, "API key 89 is not in this spec") || ls[2].CorrelationID != 2 || ls[2].ClientID == nil || *ls[2].ClientID != "admin" ||
		!strings.Contains(ls[3].Warning, "the answer to API key 89 v0") || ls[3].LatencyMicros == nil || ls[3].APIKey == nil || *ls[3].APIKey != 89 {
		t.Errorf("3.9: %+v\n%+v", ls[2], ls[3])
	}
	if ls[5].Error != nil || ls[5].Warning != "" || ls[5].LatencyMicros == nil {
		t.Errorf("3.9: the exchange after: %+v", ls[5])
	}
	code, out, errOut = decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--roundtrip")
	if code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("4.3: exit %d: %s", code, errOut)
	}
	for i, l := range fieldLines(t, out) {
		if l.Error != nil || l.Roundtrip == nil || !*l.Roundtrip {
			t.Errorf("4.3: frame %d: %+v", i, l)
		}
	}
}
