package span

import (
	"encoding/json"
	"math"
	"testing"
)

// TestAppendJSONStringLikeEncodingJSON: the escaper writes what
// encoding/json writes, for awkward strings.
func TestAppendJSONStringLikeEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "\x00\x01\x1f\n\r\t\b\f", "<a>&b", "\u2028\u2029", "日本", "bad\xffutf8\xc3", "é"} {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, []byte(s)); string(got) != string(want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}

// TestAppendValueJSON: every value kind is typed JSON that parses, with
// the Go type a tool expects.
func TestAppendValueJSON(t *testing.T) {
	uuid := make([]byte, 16)
	uuid[15] = 1
	cases := []struct {
		n    Node
		want any
	}{
		{Node{Val: ValInt, Int: -61}, float64(-61)},
		{Node{Val: ValCount, Int: 2}, float64(2)},
		{Node{Val: ValBool, Int: 1}, true},
		{Node{Val: ValFloat, Float: 1.5}, 1.5},
		{Node{Val: ValFloat, Float: math.Inf(1)}, "+Inf"},
		{Node{Val: ValString, Bytes: []byte("orders")}, "orders"},
		{Node{Val: ValString, Null: true}, nil},
		{Node{Val: ValBytes, Bytes: []byte{0xde, 0xad}}, "dead"},
		{Node{Val: ValBytes, Null: true}, nil},
		{Node{Val: ValUUID, Bytes: uuid}, "00000000-0000-0000-0000-000000000001"},
		{Node{Val: ValArray, Int: 3}, float64(3)},
		{Node{Val: ValArray, Null: true}, nil},
		{Node{Val: ValPresence, Int: -1}, float64(-1)},
	}
	for _, c := range cases {
		b, ok := c.n.AppendValueJSON(nil)
		var got any
		if err := json.Unmarshal(b, &got); !ok || err != nil || got != c.want {
			t.Errorf("%+v: %s (ok %v, %v), want %v", c.n, b, ok, err, c.want)
		}
	}
	for _, n := range []Node{{Val: ValNone}, {Val: ValStruct}, {Val: ValRecords, Bytes: []byte{1}}} {
		if b, ok := n.AppendValueJSON(nil); ok {
			t.Errorf("%+v: value %s for a node without one", n, b)
		}
	}
}
