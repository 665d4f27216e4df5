package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/vectors"
)

// TestEncodeDecodeAllVectors: for every vector (every API, version and
// kind), decode -> body JSON -> encode reproduces the bytes, and
// encode -> decode reproduces the JSON. It runs the same steps as the two
// commands, in-process with one codec.
func TestEncodeDecodeAllVectors(t *testing.T) {
	c := decCodec(t)
	vs, err := vectors.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		b, _ := hex.DecodeString(v.Hex)
		api, _ := c.Reg.API(v.APIKey)
		o := report.Options{Roundtrip: true}
		kind := schema.TypeRequest
		if v.Kind == "response" {
			kind = schema.TypeResponse
			o = report.Options{Kind: kind, API: api, Version: v.Version, Roundtrip: true}
		}
		r := report.Decode(c, b, o)
		if !r.OK() || r.Body == nil {
			t.Fatalf("%s v%d %s: %s", v.Name, v.Version, v.Kind, r.Error)
		}
		m := api.Request
		if kind == schema.TypeResponse {
			m = api.Response
		}
		val, err := jsonvalue.Unmarshal(m, v.Version, r.Body)
		if err != nil {
			t.Fatalf("%s v%d %s: %v", v.Name, v.Version, v.Kind, err)
		}
		f := &codec.Frame{Kind: kind, API: api, Version: v.Version, CorrelationID: r.CorrelationID, ClientID: []byte{}, Body: val}
		var out []byte
		if kind == schema.TypeResponse {
			out, err = c.EncodeResponse(nil, f)
		} else {
			out, err = c.EncodeRequest(nil, f)
		}
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("%s v%d %s: re-encoded %x, %v; want %x", v.Name, v.Version, v.Kind, out, err, b)
		}
		r2 := report.Decode(c, out, o)
		if !bytes.Equal(r2.Body, r.Body) {
			t.Fatalf("%s v%d %s: JSON changed:\n%s\n%s", v.Name, v.Version, v.Kind, r.Body, r2.Body)
		}
	}
}

// TestEncodeCommand runs encode on a JSON body and on a decode report line,
// and checks the bytes against kmsg.
func TestEncodeCommand(t *testing.T) {
	req := testframes.CreateTopics(7)
	want := testframes.Request("app", req, 12)

	dir := t.TempDir()
	body := filepath.Join(dir, "body.json")
	js := `{"Topics": [{"Name": "orders", "NumPartitions": 3, "ReplicationFactor": 1}], "validateOnly": true}`
	if err := os.WriteFile(body, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := decRun(t, nil, "encode", "--spec", decSpec, "--api", "CreateTopics", "--version", "7", "--correlation-id", "12", "--client-id", "app", body)
	if code != 0 || strings.TrimSpace(out) != hex.EncodeToString(want) {
		t.Fatalf("exit %d: %s%s\nwant %x", code, out, errs, want)
	}
	code, out, _ = decRun(t, []byte(js), "encode", "--spec", decSpec, "--api", "19", "--version", "7", "--correlation-id", "12", "--client-id", "app", "--raw", "-")
	if code != 0 || out != string(want) {
		t.Errorf("--raw from stdin: exit %d, %x", code, out)
	}

	// decode --format json | encode - gives the bytes back.
	code, line, _ := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--hex", hex.EncodeToString(want))
	if code != 0 {
		t.Fatal(line)
	}
	code, out, errs = decRun(t, []byte(line), "encode", "--spec", decSpec, "-")
	if code != 0 || strings.TrimSpace(out) != hex.EncodeToString(want) {
		t.Errorf("report line: exit %d %s %s", code, out, errs)
	}
	// And encode | decode gives the JSON back.
	code, line2, _ := decRun(t, []byte(out), "decode", "--spec", decSpec, "--format", "json", "-")
	var a, b map[string]any
	_ = json.Unmarshal([]byte(line), &a)
	_ = json.Unmarshal([]byte(line2), &b)
	if code != 0 || !cmp.Equal(a["body"], b["body"]) {
		t.Errorf("JSON after encode|decode differs: %s", cmp.Diff(a["body"], b["body"]))
	}

	// A response, checked against kmsg's encoding of the same values.
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = 2
	rt := kmsg.NewCreateTopicsResponseTopic()
	rt.Topic, rt.ErrorCode = "orders", 36
	resp.Topics = append(resp.Topics, rt)
	rb := resp.AppendTo(nil)
	wantResp := append([]byte{0, 0, 0, byte(4 + len(rb)), 0, 0, 0, 5}, rb...)
	code, out, errs = decRun(t, []byte(`{"Topics":[{"Name":"orders","ErrorCode":36,"ErrorMessage":null}]}`), "encode", "--spec", decSpec, "--api", "CreateTopics", "--version", "2", "--kind", "response", "--correlation-id", "5", "-")
	if code != 0 || strings.TrimSpace(out) != hex.EncodeToString(wantResp) {
		t.Errorf("response: exit %d %s %s\nwant %x", code, out, errs, wantResp)
	}
}

// TestEncodeTextEncodings: a body saved on Windows (UTF-8 with a byte order
// mark, or UTF-16 from PowerShell 5's ">") encodes as the same body in
// plain UTF-8 does, non-ASCII names included; UTF-16 that is not whole is
// an error naming the file and the byte.
func TestEncodeTextEncodings(t *testing.T) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	tp := kmsg.NewCreateTopicsRequestTopic()
	tp.Topic = "caf\u00e9-\u6ce8\u6587-\U0001F600"
	tp.NumPartitions = 1
	tp.ReplicationFactor = 1
	req.Topics = append(req.Topics, tp)
	want := hex.EncodeToString(kmsg.NewRequestFormatter(kmsg.FormatterClientID("app")).AppendRequest(nil, req, 3))

	js := `{"Topics": [{"Name": "` + tp.Topic + `", "NumPartitions": 1, "ReplicationFactor": 1}]}` + "\r\n"
	utf16 := func(le bool) []byte {
		out := []byte{0xfe, 0xff}
		if le {
			out = []byte{0xff, 0xfe}
		}
		for _, u := range utf16.Encode([]rune(js)) {
			if le {
				out = append(out, byte(u), byte(u>>8))
			} else {
				out = append(out, byte(u>>8), byte(u))
			}
		}
		return out
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"utf-8", []byte(js)},
		{"utf-8 with a byte order mark", append([]byte{0xef, 0xbb, 0xbf}, js...)},
		{"utf-16le", utf16(true)},
		{"utf-16be", utf16(false)},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(file, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := decRun(t, nil, "encode", "--spec", decSpec, "--api", "CreateTopics", "--version", "7", "--correlation-id", "3", "--client-id", "app", file)
		if code != 0 || strings.TrimSpace(out) != want {
			t.Errorf("%s: exit %d: %s%s\nwant %s", tc.name, code, out, errs, want)
		}
	}
	cut := utf16(true)
	cut = cut[:len(cut)-1]
	code, _, errs := decRun(t, cut, "encode", "--spec", decSpec, "--api", "CreateTopics", "-")
	if code != 1 || !strings.Contains(errs, "reading -: UTF-16 text (after a byte order mark) of an odd length") {
		t.Errorf("cut UTF-16: exit %d, %q", code, errs)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string
		code int
		msg  string
	}{
		{`{"Topics":[{"Nmae":"x"}]}`, []string{"--api", "CreateTopics"}, 1, "CreateTopicsRequest.Topics[0].Nmae: unknown field"},
		{`{"timeoutMs":1e99}`, []string{"--api", "CreateTopics"}, 1, "CreateTopicsRequest.timeoutMs"},
		{`{"Topics":[}`, []string{"--api", "CreateTopics"}, 1, "line 1, column 12"},
		{"{\"Topics\":[],\r\n \"Topics\":[]}", []string{"--api", "CreateTopics"}, 1, `CreateTopicsRequest.Topics: JSON syntax error: duplicate key "Topics" at line 2, column 2`},
		{`{}`, []string{}, 2, "--api is required"},
		{`{}`, []string{"--api", "NoSuchApi"}, 2, "NoSuchApi"},
		{`{}`, []string{"--api", "CreateTopics", "--version", "1"}, 2, "valid versions are 2-7"},
		{`{}`, []string{"--api", "CreateTopics", "--kind", "both"}, 2, "unknown --kind"},
		{`{"AllowAutoTopicCreation":false}`, []string{"--api", "Metadata", "--version", "3"}, 1, "does not exist at this version"},
	} {
		code, _, errs := decRun(t, []byte(tc.in), append(append([]string{"encode", "--spec", decSpec}, tc.args...), "-")...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%s %v: exit %d, %q; want %d, %q", tc.in, tc.args, code, errs, tc.code, tc.msg)
		}
	}
}

// TestEncodeHeaderTags: unknown tagged fields in a request header survive
// decode --format json | encode.
func TestEncodeHeaderTags(t *testing.T) {
	v7 := decCreateTopics(7)
	// Replace the header's empty tag section (offset 15) with one tag.
	in := setSize(slices.Concat(v7[:15], []byte{1, 5, 2, 0xca, 0xfe}, v7[16:]))
	code, line, errs := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--roundtrip", "--hex", hex.EncodeToString(in))
	if code != 0 || !strings.Contains(line, `"header_tags":[{"tag":5,"data":"cafe"}]`) {
		t.Fatalf("exit %d: %s %s", code, line, errs)
	}
	code, out, errs := decRun(t, []byte(line), "encode", "--spec", decSpec, "-")
	if code != 0 || strings.TrimSpace(out) != hex.EncodeToString(in) {
		t.Errorf("exit %d: %s %s\nwant %x", code, out, errs, in)
	}
}

// TestEncodeWarnsOnBadRecords: records given as hex are sent as they are,
// with a warning when they do not decode.
func TestEncodeWarnsOnBadRecords(t *testing.T) {
	js := `{"Acks":-1,"TopicData":[{"Name":"t","PartitionData":[{"Records":"00000000000000000000000000000000"}]}]}`
	code, out, errs := decRun(t, []byte(js), "encode", "--spec", decSpec, "--api", "Produce", "--version", "9", "-")
	if code != 0 || !strings.Contains(out, "00000000000000000000000000000000") || !strings.Contains(errs, "warning: the frame does not decode cleanly: offset 0x") {
		t.Errorf("exit %d: %s %s", code, out, errs)
	}
	js = `{"Acks":-1,"TopicData":[{"Name":"t","PartitionData":[{"Records":{"records":[{"value":"v"}]}}]}]}`
	code, _, errs = decRun(t, []byte(js), "encode", "--spec", decSpec, "--api", "Produce", "--version", "9", "-")
	if code != 0 || errs != "" {
		t.Errorf("built records: exit %d: %s", code, errs)
	}
}

// TestEncodeCheckMemory: encode's check that the frame decodes costs
// memory in proportion to the frame as the encode does, not a span tree's
// several hundred bytes per byte of frame. 100,000 empty topics (300 KB
// of JSON, a 1 MB frame, the bytes kmsg writes for them) cost 360 MB when
// the check built the tree; the bound is 300 bytes allocated per byte of
// JSON, beyond what encoding an empty body costs (loading the spec).
func TestEncodeCheckMemory(t *testing.T) {
	const n = 100_000
	js := []byte(`{"Topics":[{}` + strings.Repeat(`,{}`, n-1) + `]}`)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	for range n {
		tp := kmsg.NewCreateTopicsRequestTopic()
		tp.NumPartitions, tp.ReplicationFactor = 0, 0
		req.Topics = append(req.Topics, tp)
	}
	want := hex.EncodeToString(kmsg.NewRequestFormatter(kmsg.FormatterClientID("app")).AppendRequest(nil, req, 3))
	alloc := func(body []byte) (uint64, string, string) {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		code, out, errs := decRun(t, body, "encode", "--spec", decSpec, "--api", "CreateTopics", "--version", "7", "--correlation-id", "3", "--client-id", "app", "-")
		runtime.ReadMemStats(&b)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		return b.TotalAlloc - a.TotalAlloc, strings.TrimSpace(out), errs
	}
	base, _, _ := alloc([]byte(`{}`))
	got, out, errs := alloc(js)
	if out != want || errs != "" {
		t.Fatalf("got %d hex digits (want kmsg's %d), stderr %q", len(out), len(want), errs)
	}
	if per := (got - min(base, got)) / uint64(len(js)); per > 300 {
		t.Errorf("%d bytes allocated per byte of JSON (%d MB for %d KB)", per, got>>20, len(js)>>10)
	}
}

// TestEncodeErrorPosition: the line and column of an error in a body count
// in the input as given, not in the JSON value that holds the body: the
// third of three JSON lines, and the body inside a decode report line.
func TestEncodeErrorPosition(t *testing.T) {
	in := "{}\n{}\n  {\"timeoutMs\":1,\n \"timeoutMs\":2}\n"
	code, _, errs := decRun(t, []byte(in), "encode", "--spec", decSpec, "--api", "CreateTopics", "-")
	if code == 0 || !strings.Contains(errs, `JSON value 3 of 3: CreateTopicsRequest v7: CreateTopicsRequest.timeoutMs: JSON syntax error: duplicate key "timeoutMs" at line 4, column 2`) {
		t.Errorf("JSON lines: exit %d, %s", code, errs)
	}
	line := `{"kind":"request","api_key":19,"version":7,"correlation_id":0,"client_id":"c","header_version":2,"body":{"timeoutMs":5,"timeoutMs":6}}`
	for _, tc := range []struct{ in, want string }{
		{line, "duplicate key \"timeoutMs\" at line 1, column " + strconv.Itoa(strings.LastIndex(line, `"timeoutMs"`)+1)},
		{"\n\n" + line + "\n", "duplicate key \"timeoutMs\" at line 3, column " + strconv.Itoa(strings.LastIndex(line, `"timeoutMs"`)+1)},
		{strings.Replace(line, `,"timeoutMs":6`, "", 1) + "\n" + strings.Replace(line, `"timeoutMs":6`, "\"Topics\":[{\"Name\":\"\xff\"}]", 1),
			"CreateTopicsRequest.Topics[0].Name: text that is not UTF-8 at line 2, column " + strconv.Itoa(strings.Index(line, `"timeoutMs":6`)+20)},
	} {
		code, _, errs := decRun(t, []byte(tc.in), "encode", "--spec", decSpec, "-")
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, %s; want %q", tc.in, code, errs, tc.want)
		}
	}
}

// TestEncodeReportLineKind: a decode report line whose kind is neither
// request nor response is refused, not encoded as a request.
func TestEncodeReportLineKind(t *testing.T) {
	for kind, want := range map[string]string{
		`"request"`:  "",
		`"response"`: "",
		`"bogus"`:    `kind "bogus" is not request or response`,
		`"Response"`: `kind "Response" is not request or response`,
	} {
		line := `{"kind":` + kind + `,"api_key":19,"version":7,"correlation_id":3,"client_id":"c","header_version":2,"body":{}}`
		code, out, errs := decRun(t, []byte(line), "encode", "--spec", decSpec, "-")
		if want == "" && (code != 0 || out == "") || want != "" && (code == 0 || !strings.Contains(errs, want)) {
			t.Errorf("kind %s: exit %d, %s%s", kind, code, out, errs)
		}
	}
}

// TestEncodeClientIDWarnings: a client id flag that has no effect (on a
// response, whose header has none; --client-id beside --null-client-id)
// is warned about once, not ignored silently; the frame is the same.
func TestEncodeClientIDWarnings(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stdin string
		warn  string
	}{
		{[]string{"--kind", "response", "--client-id", "foo"}, `{}`, "--client-id has no effect on a response (its header has no client id)"},
		{[]string{"--kind", "response", "--null-client-id"}, "{}\n{}\n", "--null-client-id has no effect on a response (its header has no client id)"},
		{[]string{"--client-id", "foo", "--null-client-id"}, `{}`, "--client-id has no effect with --null-client-id"},
		{[]string{"--client-id", "foo"}, `{}`, ""},
	} {
		args := append([]string{"encode", "--spec", decSpec, "--api", "CreateTopics", "--version", "7"}, tc.args...)
		code, out, errs := decRun(t, []byte(tc.stdin), append(args, "-")...)
		if code != 0 || out == "" {
			t.Errorf("%v: exit %d, %s", tc.args, code, errs)
		}
		if n := strings.Count(errs, "warning"); tc.warn == "" && errs != "" || tc.warn != "" && (n != 1 || !strings.Contains(errs, tc.warn)) {
			t.Errorf("%v: stderr %q, want one warning %q", tc.args, errs, tc.warn)
		}
	}
}
