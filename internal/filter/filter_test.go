package filter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// apis is a small fixed API table for the tests.
func apis(name string) (int16, error) {
	k, ok := map[string]int16{"produce": 0, "fetch": 1, "metadata": 3, "heartbeat": 12}[strings.ToLower(name)]
	if !ok {
		return 0, fmt.Errorf("unknown API %q", name)
	}
	return k, nil
}

func ptr[T any](v T) *T { return &v }

// frames are the frames the expressions are checked against.
var frames = map[string]*Frame{
	"fetchReq": {Kind: "request", HasAPI: true, APIKey: 1, API: "Fetch", Version: 13, CorrelationID: 7,
		ClientID: ptr("consumer-1"), Topics: []string{"orders", "payments"}, Size: 120},
	"fetchResp": {Kind: "response", HasAPI: true, APIKey: 1, API: "Fetch", Version: 13, CorrelationID: 7,
		ClientID: ptr("consumer-1"), Topics: []string{"orders"}, Errors: []int16{0, 6, 6}, LatencyMicros: ptr(int64(1500)), Size: 4000},
	"produceResp": {Kind: "response", HasAPI: true, APIKey: 0, API: "Produce", Version: 9, CorrelationID: 8,
		ClientID: ptr("Zürich producer"), Topics: []string{"orders"}, Errors: []int16{0}, LatencyMicros: ptr(int64(800)), Size: 60},
	"hbReq":  {Kind: "request", HasAPI: true, APIKey: 12, API: "Heartbeat", Version: 4, CorrelationID: 9, Size: 40},
	"orphan": {Kind: "response", CorrelationID: 99, Size: 30},
	// A request whose bytes end before its correlation id.
	"cutReq": {Kind: "request", NoCorrelationID: true, Size: 10},
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		expr string
		want string // the frames that match, sorted, space-separated
	}{
		{"api == Fetch", "fetchReq fetchResp"},
		{"api == fetch", "fetchReq fetchResp"},
		{"api == 1", "fetchReq fetchResp"},
		{"api != Fetch", "hbReq produceResp"}, // orphan: api unknown
		{"api < 3", "fetchReq fetchResp produceResp"},
		{"api <= 1", "fetchReq fetchResp produceResp"},
		{"api > 1", "hbReq"},
		{"api >= 1", "fetchReq fetchResp hbReq"},
		{"api contains RODU", "produceResp"},
		{"version >= 9 and version < 13", "produceResp"},
		{"kind == response", "fetchResp orphan produceResp"},
		{"kind != response", "cutReq fetchReq hbReq"},
		{"correlation_id == 99", "orphan"},
		{"correlation_id == 0", ""}, // cutReq's is not 0 but unknown
		{"correlation_id >= 0", "fetchReq fetchResp hbReq orphan produceResp"},
		{"not correlation_id == 0", "cutReq fetchReq fetchResp hbReq orphan produceResp"},
		{"client_id == consumer-1", "fetchReq fetchResp"},
		{`client_id == "Zürich producer"`, "produceResp"},
		{`client_id contains 'ürich'`, "produceResp"},
		{"client_id != consumer-1", "produceResp"},                   // no client id: no match
		{"client_id < consumer-2", "fetchReq fetchResp produceResp"}, // byte order: Z < c
		{"topic == payments", "fetchReq"},
		{"topic != orders", "fetchReq"}, // some topic is not orders
		{"topic contains ord", "fetchReq fetchResp produceResp"},
		{"error == NOT_LEADER_OR_FOLLOWER", "fetchResp"},
		{"error == not_leader_for_partition", "fetchResp"},
		{"error == 6", "fetchResp"},
		{"error != NONE", "fetchResp"},
		{"error == NONE", "fetchResp produceResp"},
		{"error contains leader", "fetchResp"},
		{"error > 0", "fetchResp"},
		{"latency_us > 1000", "fetchResp"},
		{"latency_us <= 800", "produceResp"},
		{"not latency_us > 0", "cutReq fetchReq hbReq orphan"},
		{"size >= 4000 || size < 40", "cutReq fetchResp orphan"},
		{"api == Fetch and error != NONE", "fetchResp"},
		{"api == Fetch && kind == request || api == Heartbeat", "fetchReq hbReq"},
		{"api == Fetch && (kind == request || api == Heartbeat)", "fetchReq"},
		{"!(api == Fetch) and kind == request", "cutReq hbReq"},
		{"not not api == Produce", "produceResp"},
		{"NOT api == Produce AND kind == response", "fetchResp orphan"},
		{"api == Produce or api == Heartbeat and kind == response", "produceResp"}, // and binds tighter
	} {
		f, err := Compile(c.expr, apis)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		var got []string
		for _, name := range sortedNames() {
			if f.Match(frames[name]) {
				got = append(got, name)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: matches %q, want %q", c.expr, g, c.want)
		}
	}
}

func sortedNames() []string {
	return []string{"cutReq", "fetchReq", "fetchResp", "hbReq", "orphan", "produceResp"}
}

func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct {
		expr string
		col  int
		msg  string
	}{
		{"", 1, "empty expression"},
		{"apii == Fetch", 1, `unknown field "apii"`},
		{"api = Fetch", 5, "use == to compare"},
		{"api == Fecth", 8, `unknown API "Fecth"`},
		{"api ==", 7, "expected a value after api =="},
		{"api", 4, "expected an operator"},
		{"api Fetch", 5, "expected an operator"},
		{"(api == Fetch", 1, "unclosed ("},
		{"api == Fetch)", 13, "unmatched )"},
		{"api == Fetch kind == request", 14, "join comparisons with and / or"},
		{"api == Fetch and", 17, "expression ends"},
		{"api == Fetch & kind == request", 14, "use &&"},
		{"api == Fetch | kind == request", 14, "use ||"},
		{"version == nine", 12, "compares with a number"},
		{"size contains 4", 1, "is a number"},
		{"kind == reply", 9, "request or response"},
		{"kind < request", 1, "== or != only"},
		{"error == BAD_THING", 10, "unknown error name"},
		{`client_id == "abc`, 14, "unterminated string"},
		{`topic == "a\qb"`, 10, "bad escape"},
		{"topic == a#b", 11, "unexpected character '#'"},
		{"Zürich == x", 1, `unknown field "Zürich"`},
		{"client_id == Zürich and é", 25, `unknown field "é"`},
		{"client_id == Zürich and topic", 30, "expected an operator"},
		{"(api == Fetch) (api == Fetch)", 16, "unexpected"},
		{"api == Fetch and ()", 19, "expected a field"},
		{"\xff", 1, "not valid UTF-8"},
		{strings.Repeat("(", 100) + "api == 1" + strings.Repeat(")", 100), MaxDepth + 1, "nested more than"},
		{strings.Repeat("x", MaxLen+1), MaxLen + 1, "too long"},
	} {
		_, err := Compile(c.expr, apis)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a SyntaxError", c.expr, err)
			continue
		}
		if se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: %v, want column %d and %q", c.expr, err, c.col, c.msg)
		}
		if !strings.HasPrefix(err.Error(), "column ") {
			t.Errorf("%q: %q does not start with the column", c.expr, err)
		}
	}
}

func TestNoAPITable(t *testing.T) {
	if _, err := Compile("api == Fetch", nil); err == nil {
		t.Error("an API name without a table compiled")
	}
	f, err := Compile("api == 1", nil)
	if err != nil || !f.Match(frames["fetchReq"]) || f.String() != "api == 1" {
		t.Errorf("api == 1 without a table: %v", err)
	}
}

// TestNeedsBody checks which expressions read a frame's body (topic,
// error) through every kind of node.
func TestNeedsBody(t *testing.T) {
	for expr, want := range map[string]bool{
		"api == Fetch":                           false,
		`kind == response and client_id == kgo`:  false,
		"not (version > 3 or latency_us > 1000)": false,
		"size < 100 and correlation_id != 7":     false,
		"topic == orders":                        true,
		"api == Fetch and error != NONE":         true,
		"api == Fetch or topic contains ord":     true,
		"not error == NONE":                      true,
		"(api == 1 and (not (version == 2 or (kind == request and topic == x))))": true,
	} {
		f, err := Compile(expr, apis)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := f.NeedsBody(); got != want {
			t.Errorf("%s: NeedsBody %v, want %v", expr, got, want)
		}
	}
}
