package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testframes"
)

type pcapExchange struct {
	req, resp []byte
	key, ver  int16
}

// pcapExchanges builds three exchanges with kmsg, correlation ids 1..3.
func pcapExchanges() []pcapExchange {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("pcap-test"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, "t", "1"
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.Version = 3
	avr.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MaxVersion: 12}}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version = 12
	for i := int32(0); i < 200; i++ { // > one segment
		mdr.Brokers = append(mdr.Brokers, kmsg.MetadataResponseBroker{NodeID: i, Host: "broker.example", Port: 9092})
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version, hbr.ErrorCode = 4, 27
	return []pcapExchange{
		{f.AppendRequest(nil, av, 1), testframes.Response(avr, 1), 18, 3},
		{f.AppendRequest(nil, md, 2), testframes.Response(mdr, 2), 3, 12},
		{f.AppendRequest(nil, hb, 3), testframes.Response(hbr, 3), 12, 4},
	}
}

var (
	pcapClient = netip.MustParseAddrPort("10.0.0.1:51000")
	pcapServer = netip.MustParseAddrPort("10.0.0.2:9092")
	pcapT0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// writePcap writes the exchanges, each response 1 ms after its request;
// with open false the handshake and the first skip bytes of the client's
// stream are not captured.
func writePcap(t *testing.T, xs []pcapExchange, f capture.Format, open bool, skip int) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(pcapClient, pcapServer)
	if open {
		if err := c.Open(pcapT0); err != nil {
			t.Fatal(err)
		}
	}
	at := pcapT0
	for i, x := range xs {
		req := x.req
		if i == 0 && skip > 0 {
			c.Skip(capture.ClientToServer, skip)
			c.Skip(capture.ServerToClient, len(x.resp))
			req = req[skip:]
		}
		if err := c.Write(capture.ClientToServer, at, req); err != nil {
			t.Fatal(err)
		}
		if i > 0 || skip == 0 {
			if err := c.Write(capture.ServerToClient, at.Add(time.Millisecond), x.resp); err != nil {
				t.Fatal(err)
			}
		}
		at = at.Add(10 * time.Millisecond)
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type pcapLine struct {
	Kind          string     `json:"kind"`
	APIKey        int16      `json:"api_key"`
	Version       int16      `json:"version"`
	CorrelationID int32      `json:"correlation_id"`
	Src           string     `json:"src"`
	Dst           string     `json:"dst"`
	Time          *time.Time `json:"time"`
	LatencyMicros *int64     `json:"latency_us"`
	Error         *string    `json:"error"`
	Roundtrip     *bool      `json:"roundtrip"`
	Size          int        `json:"size"`
	Tree          *struct {
		Name string `json:"name"`
	} `json:"tree"`
}

func pcapLines(t *testing.T, out string) []pcapLine {
	t.Helper()
	var ls []pcapLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l pcapLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not a JSON line: %v: %.200s", err, sc.Text())
		}
		ls = append(ls, l)
	}
	return ls
}

func TestDecodePcapJSON(t *testing.T) {
	xs := pcapExchanges()
	for _, f := range []capture.Format{capture.PCAP, capture.PCAPNG} {
		path := writePcap(t, xs, f, true, 0)
		code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--roundtrip")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		ls := pcapLines(t, out)
		if len(ls) != 6 {
			t.Fatalf("%d lines, want 6:\n%s", len(ls), out)
		}
		for i, x := range xs {
			rq, rs := ls[2*i], ls[2*i+1]
			if rq.Kind != "request" || rs.Kind != "response" {
				t.Errorf("exchange %d: kinds %s, %s", i, rq.Kind, rs.Kind)
			}
			for _, l := range []pcapLine{rq, rs} {
				if l.APIKey != x.key || l.Version != x.ver || l.CorrelationID != int32(i+1) {
					t.Errorf("exchange %d %s: api %d v%d corr %d; want %d v%d corr %d", i, l.Kind, l.APIKey, l.Version, l.CorrelationID, x.key, x.ver, i+1)
				}
				if l.Error != nil || l.Roundtrip == nil || !*l.Roundtrip || l.Tree == nil || l.Time == nil {
					t.Errorf("exchange %d %s: error %v roundtrip %v tree %v time %v", i, l.Kind, l.Error, l.Roundtrip, l.Tree, l.Time)
				}
			}
			if rq.Size != len(x.req) || rs.Size != len(x.resp) {
				t.Errorf("exchange %d: sizes %d, %d; want %d, %d", i, rq.Size, rs.Size, len(x.req), len(x.resp))
			}
			if rs.LatencyMicros == nil || *rs.LatencyMicros != 1000 {
				t.Errorf("exchange %d: latency %v, want 1000 µs", i, rs.LatencyMicros)
			}
			if rq.Src != pcapClient.String() || rs.Src != pcapServer.String() {
				t.Errorf("exchange %d: src %s and %s", i, rq.Src, rs.Src)
			}
		}
	}
}

func TestDecodePcapText(t *testing.T) {
	path := writePcap(t, pcapExchanges(), capture.PCAP, true, 0)
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "-v")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"# connection 1: client 10.0.0.1:51000, server 10.0.0.2:9092, captured from its start",
		"10.0.0.1:51000 -> 10.0.0.2:9092 request Metadata(3) v12 correlation_id 2",
		"10.0.0.2:9092 -> 10.0.0.1:51000 response Metadata(3) v12 correlation_id 2",
		"latency 1ms",
		"byte layout",
		"MetadataResponse",
		"broker.example",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "3 requests, 3 responses") {
		t.Errorf("stderr: %s", errOut)
	}
	// Without -v: one summary line per frame and the connection line.
	_, out, _ = decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path)
	if n := strings.Count(out, "\n"); n != 7 {
		t.Errorf("summary output has %d lines, want 7:\n%s", n, out)
	}
}

func TestDecodePcapMidConnection(t *testing.T) {
	// No handshake, and the capture starts 9 bytes into the first request
	// (its response is missing too): the later exchanges still decode.
	path := writePcap(t, pcapExchanges(), capture.PCAP, false, 9)
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--roundtrip")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"mid-connection (no SYN captured)", "bytes skipped before this frame",
		"request Metadata(3) v12 correlation_id 2", "response Heartbeat(12) v4 correlation_id 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ApiVersions") {
		t.Errorf("the cut first request was decoded:\n%s", out)
	}
}

func TestDecodePcapFailures(t *testing.T) {
	xs := pcapExchanges()
	// A Heartbeat request whose tagged-field count claims 5 fields.
	bad := bytes.Clone(xs[2].req)
	bad[len(bad)-1] = 5
	xs[2].req = bad
	path := writePcap(t, xs, capture.PCAP, true, 0)
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 1 {
		t.Errorf("exit %d, want 1 for a frame that does not decode", code)
	}
	if !strings.Contains(errOut, "1 of 6 frames did not decode cleanly") {
		t.Errorf("stderr: %s", errOut)
	}
	var errs int
	for _, l := range pcapLines(t, out) {
		if l.Error != nil {
			errs++
			if l.Kind != "request" || l.APIKey != 12 || !strings.Contains(*l.Error, "offset") {
				t.Errorf("error on the wrong frame or without an offset: %+v %s", l, *l.Error)
			}
		}
	}
	if errs != 1 {
		t.Errorf("%d frames with errors, want 1", errs)
	}

	// A range holding the port selects what the port does.
	code, ranged, _ := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", writePcap(t, pcapExchanges(), capture.PCAP, true, 0), "--port", "9000, 9090-9092")
	code2, single, _ := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", writePcap(t, pcapExchanges(), capture.PCAP, true, 0), "--port", "9092")
	if code != 0 || code2 != 0 || ranged != single || !strings.Contains(single, "request") {
		t.Errorf("--port 9000,9090-9092: exit %d, %q; --port 9092: exit %d, %q", code, ranged, code2, single)
	}

	// Another port: nothing selected.
	code, out, errOut = decRun(t, nil, "decode", "--spec", decSpec, "--pcap", writePcap(t, pcapExchanges(), capture.PCAP, true, 0), "--port", "9093")
	if code != 0 || out != "" || !strings.Contains(errOut, "no Kafka frames found on the given --port") {
		t.Errorf("--port 9093: exit %d, out %q, err %q", code, out, errOut)
	}

	// Not a capture.
	notPcap := filepath.Join(t.TempDir(), "x.pcap")
	os.WriteFile(notPcap, []byte("this is not a capture file"), 0o644)
	code, _, errOut = decRun(t, nil, "decode", "--spec", decSpec, "--pcap", notPcap)
	if code != 1 || !strings.Contains(errOut, "not a pcap or pcapng file") {
		t.Errorf("not a capture: exit %d, %s", code, errOut)
	}
}

func TestDecodePcapCutShort(t *testing.T) {
	// A capture whose last packet was cut off (tcpdump killed mid-write):
	// the frames before the cut decode, the cut is a warning.
	path := writePcap(t, pcapExchanges(), capture.PCAP, true, 0)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-20], 0o644)
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 || !strings.Contains(errOut, "warning") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
	if n := len(pcapLines(t, out)); n != 6 {
		t.Errorf("%d frames before the cut, want 6", n)
	}
}

func TestDecodePcapRoundtripFailure(t *testing.T) {
	// The Heartbeat request's group id length (compact, 0x02 for "g")
	// written as the redundant varint 0x82 0x00: it decodes, but does not
	// re-encode to the same bytes.
	xs := pcapExchanges()
	req := xs[2].req
	at := 4 + 2 + 2 + 4 + 2 + len("pcap-test") + 1
	if req[at] != 0x02 || req[at+1] != 'g' {
		t.Fatalf("unexpected layout at %d: % x", at, req[at:at+2])
	}
	nc := append(append(bytes.Clone(req[:at]), 0x82, 0x00), req[at+1:]...)
	binary.BigEndian.PutUint32(nc, uint32(len(nc)-4))
	xs[2].req = nc
	path := writePcap(t, xs, capture.PCAP, true, 0)
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--roundtrip")
	if code != 1 || !strings.Contains(errOut, "did not decode cleanly or round-trip") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
	var bad int
	for _, l := range pcapLines(t, out) {
		if l.Roundtrip != nil && !*l.Roundtrip {
			bad++
			if l.APIKey != 12 || l.Kind != "request" || l.Error != nil {
				t.Errorf("round trip failed on the wrong frame: %+v", l)
			}
		}
	}
	if bad != 1 {
		t.Errorf("%d frames failed the round trip, want 1", bad)
	}
	// Without --roundtrip the same capture is fine.
	if code, _, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json"); code != 0 {
		t.Errorf("without --roundtrip: exit %d: %s", code, errOut)
	}
}

// TestProgressBar: a buffer is not a terminal, so decode draws no bar
// on it (the bar itself is term.Progress's, tested there; the pty test
// sees it drawn).
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	if isTerminal(&b) {
		t.Error("a buffer is not a terminal")
	}
}

// TestDecodePcapAllFramesCut: a capture whose every frame a gap cut (a
// small snap length) shows them as cut, and does not then say that it
// found no Kafka frames.
func TestDecodePcapAllFramesCut(t *testing.T) {
	xs := pcapExchanges()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(pcapClient, pcapServer)
	if err := c.Open(pcapT0); err != nil {
		t.Fatal(err)
	}
	at := pcapT0
	for _, x := range xs {
		for d, b := range map[capture.Dir][]byte{capture.ClientToServer: x.req, capture.ServerToClient: x.resp} {
			if err := c.Write(d, at, b[:12]); err != nil {
				t.Fatal(err)
			}
			c.Skip(d, len(b)-12)
		}
		at = at.Add(10 * time.Millisecond)
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path)
	if code != 0 || strings.Count(out, "(cut: 12 captured)") != 2*len(xs) {
		t.Errorf("exit %d, %d frames cut, want %d:\n%s", code, strings.Count(out, "(cut: 12 captured)"), 2*len(xs), out)
	}
	if strings.Contains(errOut, "no Kafka frames found") {
		t.Errorf("frames were shown, yet: %s", errOut)
	}
}

// TestDecodePcapMaxConns: with more connections open at once than
// --max-conns, every frame is still decoded, and decode --pcap and stats
// --pcap count the connections finished early on stderr.
func TestDecodePcapMaxConns(t *testing.T) {
	xs := pcapExchanges()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	const conns = 6
	at := pcapT0
	var cws []*capture.ConnWriter
	for i := range conns {
		c := w.Conn(netip.AddrPortFrom(pcapClient.Addr(), uint16(51000+i)), pcapServer)
		if err := c.Open(at); err != nil {
			t.Fatal(err)
		}
		x := xs[2] // Heartbeat
		if err := c.Write(capture.ClientToServer, at.Add(time.Millisecond), x.req); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(capture.ServerToClient, at.Add(2*time.Millisecond), x.resp); err != nil {
			t.Fatal(err)
		}
		at = at.Add(10 * time.Millisecond)
		cws = append(cws, c)
	}
	for _, c := range cws {
		if err := c.Close(at); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "4 connections finished early (more were open at once than --max-conns follows"
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--max-conns", "2")
	if code != ExitOK || !strings.Contains(errOut, want) || !strings.Contains(errOut, "6 connections, 6 requests, 6 responses") {
		t.Errorf("decode: exit %d, stderr %q", code, errOut)
	}
	if ls := pcapLines(t, out); len(ls) != 2*conns {
		t.Errorf("decode: %d frames, want %d", len(ls), 2*conns)
	}
	code, out, errOut = decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--max-conns", "2")
	if code != ExitOK || !strings.Contains(errOut, want) || !strings.Contains(out, "Heartbeat(12)") {
		t.Errorf("stats: exit %d, stderr %q, out %q", code, errOut, out)
	}
	// stats lists the connections with the most frames: here all have two.
	code, out, errOut = decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--max-conns", "2", "--top-conns", "2")
	if code != ExitOK || !strings.Contains(out, "and 4 more connections (8 frames), with no more frames each than those listed") {
		t.Errorf("stats --top-conns 2: exit %d, stderr %q, out %q", code, errOut, out)
	}
	// Without a capture, the flag is refused.
	if code, _, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--max-conns", "2", "--hex", "00"); code != ExitUsage || !strings.Contains(errOut, "--max-conns goes with a capture") {
		t.Errorf("decode --hex --max-conns: exit %d, %q", code, errOut)
	}
}
