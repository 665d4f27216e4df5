package proxylog

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
)

// logged writes the event's log line as the proxy does and reads it back.
func logged(t *testing.T, e *proxy.Event) *Line {
	t.Helper()
	b, err := proxy.AppendJSON(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return l
}

func frameText(t *testing.T, r *report.Frame) string {
	t.Helper()
	var b bytes.Buffer
	if err := text.Frame(&b, r, true, text.Style{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRoundTrip logs a request and its response (encoded by kmsg) as the
// proxy does, reads the lines back and decodes them: the reports show what
// decoding the frames directly shows, the response with the API and
// version its line names.
func TestRoundTrip(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr("orders")
	req.Topics = append(req.Topics, topic)
	reqB := kmsg.NewRequestFormatter(kmsg.FormatterClientID("app")).AppendRequest(nil, req, 5)
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	rt := kmsg.NewMetadataResponseTopic()
	rt.Topic = kmsg.StringPtr("orders")
	resp.Topics = append(resp.Topics, rt)
	respB := testframes.Response(resp, 5)
	api, _ := c.Reg.API(3)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lat := int64(250)

	direct := report.Decode(c, reqB, report.Options{})
	direct.Time = &at
	l := logged(t, &proxy.Event{Kind: proxy.EventFrame, Conn: 3, Client: "c:1", Listener: "l:2", Upstream: "u:3",
		Dir: "request", Frame: direct, Data: reqB})
	if !l.IsFrame() || l.Conn != 3 || l.Kind != "request" {
		t.Fatalf("request line read as %+v", l)
	}
	fr, e, err := l.Decode(c, redact.NewConns(false), budget.Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := frameText(t, fr), frameText(t, direct); got != want {
		t.Errorf("request read back:\n%s\nwant:\n%s", got, want)
	}
	if e.Conn != 3 || e.Client != "c:1" || e.Upstream != "u:3" || e.Dir != "request" || !bytes.Equal(e.Data, reqB) {
		t.Errorf("request event %+v", e)
	}

	directResp := report.Decode(c, respB, report.Options{Kind: schema.TypeResponse, API: api, Version: 12})
	directResp.Time, directResp.LatencyMicros = &at, &lat
	l = logged(t, &proxy.Event{Kind: proxy.EventFrame, Conn: 3, Dir: "response", Frame: directResp, Data: respB})
	fr, _, err = l.Decode(c, redact.NewConns(false), budget.Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := frameText(t, fr), frameText(t, directResp); got != want {
		t.Errorf("response read back:\n%s\nwant:\n%s", got, want)
	}
	if fr.API != "Metadata" || fr.Version != 12 || fr.LatencyMicros == nil || *fr.LatencyMicros != 250 {
		t.Errorf("response read back as %s v%d, latency %v", fr.API, fr.Version, fr.LatencyMicros)
	}
}

// TestSecretsRedacted reads back a log written with secrets shown: the
// password of a PLAIN SaslAuthenticate is redacted unless asked for.
func TestSecretsRedacted(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	const password = "hunter2-but-longer"
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("app"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00alice\x00"+password)
	var lines []*Line
	for i, b := range [][]byte{f.AppendRequest(nil, hs, 1), f.AppendRequest(nil, auth, 2)} {
		r := report.Decode(c, b, report.Options{})
		r.Index = i
		lines = append(lines, logged(t, &proxy.Event{Kind: proxy.EventFrame, Conn: 1, Dir: "request", Frame: r, Data: b}))
	}
	for _, show := range []bool{false, true} {
		conns := redact.NewConns(show)
		var out string
		for _, l := range lines {
			fr, _, err := l.Decode(c, conns, budget.Limits{}, false)
			if err != nil {
				t.Fatal(err)
			}
			out += frameText(t, fr) + string(fr.Bytes)
		}
		if got := strings.Contains(out, password); got != show {
			t.Errorf("show secrets %v: the output holds the password: %v", show, got)
		}
	}
}

// TestBadLines: a line that is no frame, hex that is not hex, a log that
// is not JSON.
func TestBadLines(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	l, err := Parse([]byte(`{"event":"listening","detail":"on 127.0.0.1:9092"}`))
	if err != nil || l.IsFrame() {
		t.Errorf("event line: %+v, %v", l, err)
	}
	if _, _, err := l.Decode(c, nil, budget.Limits{}, false); err == nil {
		t.Errorf("decoding an event line did not fail")
	}
	l, _ = Parse([]byte(`{"kind":"request","hex":"00zz"}`))
	if _, _, err := l.Decode(c, nil, budget.Limits{}, false); err == nil || !strings.Contains(err.Error(), "hex") {
		t.Errorf("bad hex: %v", err)
	}
	if _, err := Parse([]byte(`00000010 0001`)); err == nil {
		t.Errorf("hex parsed as a log line")
	}
	for in, want := range map[string]bool{"  \n{\"a\":1}": true, "0000": false, "": false, strings.Repeat(" ", 5000) + "{": false} {
		if got := StartsWithBrace(bufio.NewReader(strings.NewReader(in))); got != want {
			t.Errorf("StartsWithBrace(%.20q) = %v", in, got)
		}
	}
}

// TestApiVersionsV0AnswerReadBack: the proxy logs the broker's v0
// UNSUPPORTED_VERSION answer to ApiVersions v4 as read as v0, with
// request_version 4; decoding the log reads it the same way (the note
// and request_version kept), so that stats of what decode prints counts
// it under ApiVersions v4, as stats of the log and of a capture do.
func TestApiVersionsV0AnswerReadBack(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	answer := kmsg.NewPtrApiVersionsResponse()
	answer.Version, answer.ErrorCode = 0, 35
	answer.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	b := testframes.Response(answer, 0)
	api, _ := c.Reg.API(18)
	direct := report.Response(c, b, api, 4, report.Options{})
	if direct.Error != "" || direct.RequestVersion == nil {
		t.Fatalf("the proxy's report: %+v", direct)
	}
	lat := int64(90)
	direct.LatencyMicros = &lat
	l := logged(t, &proxy.Event{Kind: proxy.EventFrame, Conn: 1, Dir: "response", Frame: direct, Data: b})
	fr, _, err := l.Decode(c, redact.NewConns(false), budget.Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if fr.Error != "" || fr.Version != 0 || fr.RequestVersion == nil || *fr.RequestVersion != 4 || fr.Note != direct.Note {
		t.Errorf("read back: error %q, v%d, request_version %v, note %q; want the proxy's %q", fr.Error, fr.Version, fr.RequestVersion, fr.Note, direct.Note)
	}
	if got, want := frameText(t, fr), frameText(t, direct); got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
}

// StartsWithBrace sees through a byte order mark, UTF-16's too.
func TestStartsWithBraceBOM(t *testing.T) {
	for in, want := range map[string]bool{
		"\ufeff {\"a\":1}":    true,
		"\xff\xfe \x00{\x00":  true,
		"\xfe\xff\x00\r\x00{": true,
		"\xff\xfe0\x000\x00":  false,
		"\xff\xfe{\x01":       false,
		"\xef\xbb{":           false,
	} {
		if got := StartsWithBrace(bufio.NewReader(strings.NewReader(in))); got != want {
			t.Errorf("StartsWithBrace(%q) = %v", in, got)
		}
	}
}
