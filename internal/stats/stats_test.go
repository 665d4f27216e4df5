package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/term"
)

func TestPercentileNearestRank(t *testing.T) {
	var oneTo100 []int64
	for i := int64(1); i <= 100; i++ {
		oneTo100 = append(oneTo100, i)
	}
	for _, c := range []struct {
		vals []int64
		p    int
		want int64
	}{
		{oneTo100, 50, 50}, {oneTo100, 99, 99}, {oneTo100, 100, 100}, {oneTo100, 1, 1},
		{[]int64{7}, 50, 7}, {[]int64{7}, 99, 7},
		{[]int64{1, 2}, 50, 1}, {[]int64{1, 2}, 99, 2},
		{[]int64{10, 20, 30}, 50, 20}, {[]int64{10, 20, 30}, 99, 30},
		// 200 values: rank ceil(0.99*200) = 198.
		{append(append([]int64{}, oneTo100...), oneTo100...), 99, 99},
		{nil, 50, 0},
	} {
		vals := append([]int64(nil), c.vals...)
		sortInts(vals)
		if got := Percentile(vals, c.p); got != c.want {
			t.Errorf("p%d of %d values: %d, want %d", c.p, len(vals), got, c.want)
		}
	}
}

func sortInts(v []int64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestAggregate(t *testing.T) {
	a := New()
	req := func(conn string, key, v int16, size int, id *string) {
		a.Add(&Record{Conn: conn, Client: "c" + conn, Server: "s", APIKey: key, API: map[int16]string{0: "Produce", 1: "Fetch"}[key], Version: v, Size: size, ClientID: id})
	}
	resp := func(conn string, key, v int16, size int, lat int64, errs ...int16) {
		a.Add(&Record{Conn: conn, Client: "c" + conn, Server: "s", Response: true, Paired: true, APIKey: key, Version: v, Size: size, LatencyMicros: lat, Errors: errs})
	}
	req("1", 1, 13, 100, ptr("a"))
	resp("1", 1, 13, 1000, 300, 0, 6, 6)
	req("1", 1, 13, 100, ptr("b")) // the connection keeps its first client id
	resp("1", 1, 13, 2000, 100, 0, 0)
	req("2", 0, 9, 500, nil)
	req("2", 0, 9, 700, ptr("p")) // acks=0: no response
	resp("2", 0, 9, 60, 4000, 7)
	a.Add(&Record{Conn: "2", Response: true, Size: 33}) // request not captured
	s := a.Summary()
	want := &Summary{
		APIs: []APIStats{
			{APIKey: 0, Name: "Produce", Version: 9, Requests: 2, Responses: 1, Unanswered: 1, Bytes: Bytes{1200, 60},
				Latency: &Latency{4000, 4000, 4000}, Errors: map[string]int64{"REQUEST_TIMED_OUT": 1}, Latencies: []int64{4000}},
			{APIKey: 1, Name: "Fetch", Version: 13, Requests: 2, Responses: 2, Bytes: Bytes{200, 3000},
				Latency: &Latency{100, 300, 300}, Errors: map[string]int64{"NOT_LEADER_OR_FOLLOWER": 2}, Latencies: []int64{100, 300}},
		},
		Connections: []ConnStats{
			{ID: 1, Client: "c1", Server: "s", ClientID: ptr("a"), Frames: 4},
			{ID: 2, Client: "c2", Server: "s", ClientID: ptr("p"), Frames: 4, Unpaired: 1},
		},
		UnpairedResponses: 1,
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("summary (-want +got):\n%s", diff)
	}
	var js bytes.Buffer
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"apis":[{"api_key":0,"name":"Produce","version":9,"requests":2,"responses":1,"unanswered":1,"bytes":{"request":1200,"response":60},"latency_us":{"p50":4000,"p99":4000,"max":4000},"errors":{"REQUEST_TIMED_OUT":1}},` +
		`{"api_key":1,"name":"Fetch","version":13,"requests":2,"responses":2,"unanswered":0,"bytes":{"request":200,"response":3000},"latency_us":{"p50":100,"p99":300,"max":300},"errors":{"NOT_LEADER_OR_FOLLOWER":2}}],` +
		`"connections":[{"id":1,"client":"c1","server":"s","client_id":"a","frames":4},{"id":2,"client":"c2","server":"s","client_id":"p","frames":4,"unpaired_responses":1}],"unpaired_responses":1}` + "\n"
	if js.String() != wantJSON {
		t.Errorf("JSON:\n%s\nwant\n%s", js.String(), wantJSON)
	}

	var txt bytes.Buffer
	if err := s.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	const wantText = `API         VERSION  REQUESTS  RESPONSES  UNANSWERED  REQ BYTES  RESP BYTES  P50 µs  P99 µs  MAX µs  ERRORS
Produce(0)       v9         2          1           1       1200          60    4000    4000    4000  REQUEST_TIMED_OUT×1
Fetch(1)        v13         2          2           0        200        3000     100     300     300  NOT_LEADER_OR_FOLLOWER×2

CONN  CLIENT  SERVER  CLIENT ID  FRAMES
   1  c1      s       "a"             4
   2  c2      s       "p"             4

1 response without its request (not captured): API and version unknown, not counted above
`
	if txt.String() != wantText {
		t.Errorf("text:\n%s\nwant\n%s", txt.String(), wantText)
	}
}

func TestReadJSONLines(t *testing.T) {
	in := strings.Join([]string{
		`{"event":"open","conn":3,"detail":"client connected"}`,
		`{"index":0,"offset":0,"kind":"request","api_key":3,"api":"Metadata","version":12,"correlation_id":1,"client_id":"k","size":30,"src":"1.1.1.1:5","dst":"2.2.2.2:9092","conn":3,"hex":"","tree":null}`,
		`{"index":0,"offset":0,"kind":"response","api_key":3,"api":"Metadata","version":12,"correlation_id":1,"size":90,"src":"2.2.2.2:9092","dst":"1.1.1.1:5","latency_us":250,"conn":3,"body":{"ThrottleTimeMs":0,"Topics":[{"ErrorCode":3,"Name":"x","Partitions":[{"ErrorCode":6,"Replicas":[1,2]},{"ErrorCode":0}]}],"ErrorCode":0},"hex":"","tree":null}`,
		``,
		`{"index":1,"offset":90,"kind":"response","api_key":0,"version":0,"correlation_id":9,"size":20,"src":"2.2.2.2:9092","dst":"1.1.1.1:5","error":"no request","hex":"","tree":null}`,
		`{"index":1,"offset":30,"kind":"request","api_key":12,"api":"Heartbeat","version":4,"correlation_id":2,"client_id":"k","size":40,"src":"1.1.1.9:6","dst":"2.2.2.2:9092","hex":""}`,
		`{"event":"close","conn":3}`,
	}, "\n")
	a := New()
	st, err := ReadJSONLines(strings.NewReader(in), a.Add)
	if err != nil {
		t.Fatal(err)
	}
	if st.Frames != 4 || st.Events != 2 {
		t.Errorf("read %+v", st)
	}
	s := a.Summary()
	if len(s.APIs) != 2 || s.APIs[0].Name != "Metadata" || s.APIs[0].Responses != 1 || s.APIs[0].Latency.Max != 250 ||
		!cmp.Equal(s.APIs[0].Errors, map[string]int64{"UNKNOWN_TOPIC_OR_PARTITION": 1, "NOT_LEADER_OR_FOLLOWER": 1}) {
		t.Errorf("APIs: %+v", s.APIs)
	}
	if s.UnpairedResponses != 1 || len(s.Connections) != 3 || s.Connections[0].Frames != 2 || *s.Connections[0].ClientID != "k" ||
		s.Connections[1].Client != "1.1.1.1:5" || s.Connections[1].Unpaired != 1 || s.Connections[2].Client != "1.1.1.9:6" {
		t.Errorf("connections: %+v, unpaired %d", s.Connections, s.UnpairedResponses)
	}

	// With an admit function: asked about frame lines only, in order;
	// those it refuses add no record; its error stops the read with the
	// line's number.
	var asked []string
	b := New()
	st, err = ReadJSONLinesWith(strings.NewReader(in), func(line []byte) (bool, error) {
		asked = append(asked, string(line[:22]))
		return strings.Contains(string(line), `"api":"Metadata"`), nil
	}, b.Add, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Frames != 4 || st.Events != 2 || len(asked) != 4 || !strings.HasPrefix(asked[3], `{"index":1,"offset":30`) {
		t.Errorf("with admit: read %+v, asked %q", st, asked)
	}
	if s := b.Summary(); len(s.APIs) != 1 || s.APIs[0].Name != "Metadata" || s.APIs[0].Requests != 1 || s.APIs[0].Responses != 1 || s.UnpairedResponses != 0 {
		t.Errorf("with admit: %+v, unpaired %d", s.APIs, s.UnpairedResponses)
	}
	_, err = ReadJSONLinesWith(strings.NewReader(in), func([]byte) (bool, error) { return false, errors.New("no hex") }, b.Add, nil)
	if err == nil || err.Error() != "line 2: no hex" {
		t.Errorf("admit's error: %v", err)
	}

	for bad, want := range map[string]string{
		"{}\nnot json":                 "line 1: kind",
		`{"kind":"request"}`:           "line 1: a request line without api_key",
		"\n\n{\"kind\":\"x\"}":         "line 3: kind \"x\"",
		`{"kind":"response","body":{`:  "line 1: not a JSON object",
		`{"kind":"request","api_key":`: "line 1: not a JSON object",
		// Sizes no frame has: negative, or beyond an int32 size prefix
		// (two such would wrap the byte counts around).
		`{"kind":"request","api_key":3,"version":12,"size":-5}`:                  "line 1: size -5",
		`{"kind":"request","api_key":3,"version":12,"size":9223372036854775807}`: "line 1: size 9223372036854775807",
	} {
		if _, err := ReadJSONLines(strings.NewReader(bad), a.Add); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
}

func TestBodyErrors(t *testing.T) {
	for body, want := range map[string][]int16{
		`{"ErrorCode":5}`: {5},
		`{"A":{"ErrorCode":1,"B":[{"PartitionErrorCode":2},{"x":[1,2,{"ErrorCode":3}]}]},"ErrorCode":4}`: {1, 2, 3, 4},
		`{"Name":"ErrorCode","V":7,"ErrorCodes":[9]}`:                                                    nil,
		`{"ErrorCode":99999}`:           nil, // not an int16
		`{"ErrorCode":{"ErrorCode":8}}`: {8},
	} {
		got, err := bodyErrors(json.RawMessage(body))
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", body, got, err, want)
		}
	}
}

func TestHTML(t *testing.T) {
	a := New()
	for i := int64(1); i <= 100; i++ {
		a.Add(&Record{Conn: "1", Client: "<c>", Server: "s&", APIKey: 12, API: "Heart<beat>", Version: 4, Size: 40, ClientID: ptr(`"><script>alert(1)</script>`)})
		a.Add(&Record{Conn: "1", Response: true, Paired: true, APIKey: 12, Version: 4, Size: 20, LatencyMicros: i * 100})
	}
	a.Add(&Record{Conn: "1", APIKey: 0, API: "Produce", Version: 9, Size: 100}) // no response: no chart
	var b bytes.Buffer
	if err := a.Summary().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "src=", "href=", "http://", "https://", "@import", "<c>", "Heart<beat>"} {
		if strings.Contains(strings.ReplaceAll(out, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	for _, want := range []string{"&lt;c&gt;", "Heart&lt;beat&gt;(12) v4", "&lt;script&gt;", "<svg", "no paired responses",
		// 100..10000 µs: buckets [100,200) (1), [200,500) (3), [500,1000) (5), [1ms,2ms) (10), [2ms,5ms) (30), [5ms,10ms) (50), [10ms, 20ms) (1).
		"<title>1 responses in [100µs, 200µs)</title>", "<title>3 responses in [200µs, 500µs)</title>", "<title>50 responses in [5ms, 10ms)</title>",
		"<title>1 responses in [10ms, 20ms)</title>", "<td>5000</td><td>9900</td><td>10000</td>"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestHistogram(t *testing.T) {
	got := Histogram([]int64{0, 1, 2, 4, 5, 9, 499, 500, 1000})
	want := []Bucket{{0, 1, 1}, {1, 2, 1}, {2, 5, 2}, {5, 10, 2}, {10, 20, 0}, {20, 50, 0}, {50, 100, 0}, {100, 200, 0}, {200, 500, 1}, {500, 1000, 1}, {1000, 2000, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Histogram([]int64{math.MaxInt64}); len(got) != 1 || got[0].Count != 1 || got[0].Hi != math.MaxInt64 {
		t.Errorf("the largest latency: %+v", got)
	}
}

func TestErrorListLimit(t *testing.T) {
	errs := map[string]int64{"A": 5, "B": 4, "C": 3, "D": 2, "E": 1, "F": 1}
	if got := errorList(errs, 3); got != "A×5, B×4, C×3, +3 others ×4" {
		t.Errorf("limited: %q", got)
	}
	if got := errorList(errs, 0); got != "A×5, B×4, C×3, D×2, E×1, F×1" {
		t.Errorf("all: %q", got)
	}
	if got := errorList(nil, 3); got != "-" {
		t.Errorf("none: %q", got)
	}
}

func TestUndecoded(t *testing.T) {
	a := New()
	a.Add(&Record{Conn: "1", APIKey: 1, API: "Fetch", Version: 13, Size: 10})
	a.Add(&Record{Conn: "1", Response: true, Paired: true, APIKey: 1, Version: 13, Size: 10, LatencyMicros: 5, Undecoded: true})
	s := a.Summary()
	var b bytes.Buffer
	s.WriteText(&b)
	if s.APIs[0].Undecoded != 1 || !strings.Contains(b.String(), "- (1 responses did not decode)") {
		t.Errorf("%+v\n%s", s.APIs[0], b.String())
	}
	b.Reset()
	s.WriteJSON(&b)
	if !strings.Contains(b.String(), `"errors":{},"undecoded":1}`) {
		t.Errorf("%s", b.String())
	}
}

// TestTextColumnsInCells: the text tables are aligned in terminal cells,
// as docs/cli.md promises: a client id of East Asian wide characters
// (two cells each, as a terminal shows them) pads the others to its
// width, and the columns after it line up.
func TestTextColumnsInCells(t *testing.T) {
	a := New()
	for i, id := range []string{"Zürich-日本-客户端", "plain", "bad\xff\xfe", "ｆｕｌｌ"} {
		conn := strconv.Itoa(i)
		a.Add(&Record{Conn: conn, Client: "127.0.0.1:5000" + conn, Server: "127.0.0.1:9092", APIKey: 18, API: "ApiVersions", Version: 3, Size: 40, ClientID: ptr(id)})
	}
	var b bytes.Buffer
	if err := a.Summary().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	conns := lines[slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "CONN") }):]
	want := term.Width(conns[0])
	for _, l := range conns[1:] {
		if w := term.Width(l); w != want {
			t.Errorf("row %q is %d cells wide, the header %d", l, w, want)
		}
	}
	if t.Failed() {
		t.Log("\n" + b.String())
	}
}

// TestHTMLStringsFromTraffic: client ids (and, from JSON lines,
// endpoints) that are not valid UTF-8, or hold control or bidi override
// characters, are shown in the HTML page escaped as the text table shows
// them, so that the page is valid UTF-8 (as its charset says) and no
// override reverses what follows. kgo clients with such ids against kfake
// put them in a real capture.
func TestHTMLStringsFromTraffic(t *testing.T) {
	a := New()
	for i, id := range []string{"bad\xff\xfe-id\x01ctl", "rtl-\u202eevil", "Zürich-日本-客户端"} {
		conn := strconv.Itoa(i)
		a.Add(&Record{Conn: conn, Client: "10.0.0.1:5000" + conn, Server: "host\x1b[31m\xff:9092", APIKey: 18, API: "ApiVersions", Version: 3, Size: 40, ClientID: ptr(id)})
	}
	var b bytes.Buffer
	if err := a.Summary().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !utf8.ValidString(out) {
		t.Errorf("the page is not valid UTF-8")
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r == '\u202e' {
			t.Errorf("the page holds %U", r)
		}
	}
	for _, want := range []string{`bad\xff\xfe-id\x01ctl`, `rtl-\u202eevil`, ">Zürich-日本-客户端<", `host\x1b[31m\xff:9092`} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestJSONLinesClientIDBytes: a client id that is not valid UTF-8 reaches
// a JSON line as encoding/json writes it, each bad byte a U+FFFD; the
// frame's hex keeps the bytes, and stats of the lines shows the client id
// that stats of the capture shows ("bad\xff\xfe-id", not "bad��-id"), as
// kgo clients with such an id against kfake showed.
func TestJSONLinesClientIDBytes(t *testing.T) {
	// ApiVersions v3, correlation id 0, client id "bad\xff\xfe-id".
	const frame = "0000001a00120003000000000008626164fffe2d696400046b676f023100"
	line := `{"index":0,"offset":0,"kind":"request","api_key":18,"api":"ApiVersions","version":3,"correlation_id":0,"client_id":"bad\ufffd\ufffd-id","size":30,"src":"1.1.1.1:5","dst":"2.2.2.2:9092","hex":"` + frame + `"}`
	for _, in := range []string{line, strings.Replace(line, `,"hex":"`+frame+`"`, "", 1), strings.Replace(line, frame, frame[:30], 1)} {
		a := New()
		if _, err := ReadJSONLines(strings.NewReader(in), a.Add); err != nil {
			t.Fatal(err)
		}
		want := "bad\xff\xfe-id"
		if !strings.Contains(in, frame) {
			want = "bad\ufffd\ufffd-id" // no hex, or hex cut short: the line's text
		}
		if c := a.Summary().Connections; len(c) != 1 || c[0].ClientID == nil || *c[0].ClientID != want {
			t.Errorf("client id %q, want %q (line %s)", *c[0].ClientID, want, in)
		}
	}
}

// TestReadJSONLinesKinds: a line of another kind is an error naming its
// line; a log segment's entry line (decode --segment) says what it is.
func TestReadJSONLinesKinds(t *testing.T) {
	for line, want := range map[string]string{
		`{"index":0,"offset":0,"kind":"entry","size":61,"hex":"","tree":null}`: `line 2: kind "entry": a log segment's entry (decode --segment)`,
		`{"index":0,"offset":0,"kind":"banana","size":61}`:                     `line 2: kind "banana": want request or response`,
	} {
		in := `{"event":"open","conn":3}` + "\n" + line + "\n"
		_, err := ReadJSONLines(strings.NewReader(in), func(*Record) { t.Error("a record was added") })
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

// TestReadJSONLinesKindQuotedShort: a line's kind is quoted in its
// error cut to a few dozen bytes, not whole (a kind of a megabyte of
// control characters made an error of 4 MB).
func TestReadJSONLinesKindQuotedShort(t *testing.T) {
	in := `{"kind":"` + strings.Repeat(`\u0001`, 1<<20) + `","size":1}` + "\n"
	_, err := ReadJSONLines(strings.NewReader(in), func(*Record) { t.Error("a record was added") })
	if err == nil || !strings.HasPrefix(err.Error(), `line 1: kind "\x01\x01`) || len(err.Error()) > 300 {
		t.Errorf("an error of %d bytes: %.100s", len(err.Error()), err)
	}
}

// endlessZeros yields zero bytes: a device or a binary file read as JSON
// lines.
type endlessZeros struct{}

func (endlessZeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestReadJSONLinesWithoutLineEnds: input with no line end is refused at
// its first byte that cannot start a JSON object, not read whole into
// one line (the device /dev/zero made stats grow without bound).
func TestReadJSONLinesWithoutLineEnds(t *testing.T) {
	var a, z runtime.MemStats
	runtime.ReadMemStats(&a)
	_, err := ReadJSONLines(io.LimitReader(endlessZeros{}, 128<<20), New().Add)
	runtime.ReadMemStats(&z)
	if err == nil || !strings.Contains(err.Error(), "line 1: not a JSON object") {
		t.Errorf("err %v", err)
	}
	if n := z.TotalAlloc - a.TotalAlloc; n > 4<<20 {
		t.Errorf("%d bytes allocated for a line of zeros", n)
	}
}

// TestReadJSONLinesCloseReleasesRows: a proxy log's close events end
// their connections, so that a listing aggregator keeps rows only for the
// connections open at once and those it lists, summing the others, as
// with a capture; the figures are those of reading without them.
func TestReadJSONLinesCloseReleasesRows(t *testing.T) {
	const n = 1000
	var b strings.Builder
	for c := 1; c <= n; c++ {
		fmt.Fprintf(&b, `{"conn":%d,"event":"open"}`+"\n", c)
		for range c % 3 {
			fmt.Fprintf(&b, `{"conn":%d,"kind":"request","api_key":18,"api":"ApiVersions","version":3,"size":20,"src":"c:%d","dst":"b:9092"}`+"\n", c, c)
		}
		fmt.Fprintf(&b, `{"conn":%d,"kind":"request","api_key":3,"api":"Metadata","version":12,"size":30,"src":"c:%d","dst":"b:9092"}`+"\n", c, c)
		fmt.Fprintf(&b, `{"conn":%d,"event":"close"}`+"\n", c)
	}
	in := b.String()

	kept := NewListing(5)
	var closedConns []int
	st, err := ReadJSONLinesWith(strings.NewReader(in), nil, kept.Add, func(conn string, c int) {
		closedConns = append(closedConns, c)
		kept.Close(conn)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 2*n || len(closedConns) != n || closedConns[n-1] != n {
		t.Fatalf("read %+v, %d closes", st, len(closedConns))
	}
	if len(kept.conns) != 0 || len(kept.done) != 5 {
		t.Errorf("rows kept: %d open, %d ended; want 0 and the 5 listed", len(kept.conns), len(kept.done))
	}

	all := NewListing(5)
	if _, err := ReadJSONLinesWith(strings.NewReader(in), nil, all.Add, nil); err != nil {
		t.Fatal(err)
	}
	if len(all.conns) != n {
		t.Errorf("without close events, %d rows kept, want %d", len(all.conns), n)
	}
	got, want := kept.Summary(), all.Summary()
	if got.Omitted == nil || got.Omitted.Connections != n-5 || !cmp.Equal(got, want) {
		t.Errorf("summary with close events:\n%+v\nwithout:\n%+v", got, want)
	}
}
