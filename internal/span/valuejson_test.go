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
		n    valueView
		want any
	}{
		{valueView{Val: ValInt, Int: -61}, float64(-61)},
		{valueView{Val: ValCount, Int: 2}, float64(2)},
		{valueView{Val: ValBool, Int: 1}, true},
		{valueView{Val: ValFloat, Float: 1.5}, 1.5},
		{valueView{Val: ValFloat, Float: math.Inf(1)}, "+Inf"},
		{valueView{Val: ValString, Bytes: []byte("orders")}, "orders"},
		{valueView{Val: ValString, Null: true}, nil},
		{valueView{Val: ValBytes, Bytes: []byte{0xde, 0xad}}, "dead"},
		{valueView{Val: ValBytes, Null: true}, nil},
		{valueView{Val: ValUUID, Bytes: uuid}, "00000000-0000-0000-0000-000000000001"},
		{valueView{Val: ValArray, Int: 3}, float64(3)},
		{valueView{Val: ValArray, Null: true}, nil},
		{valueView{Val: ValPresence, Int: -1}, float64(-1)},
	}
	for _, c := range cases {
		b, ok := c.n.appendJSON(nil)
		var got any
		if err := json.Unmarshal(b, &got); !ok || err != nil || got != c.want {
			t.Errorf("%+v: %s (ok %v, %v), want %v", c.n, b, ok, err, c.want)
		}
	}
	for _, n := range []valueView{{Val: ValNone}, {Val: ValStruct}, {Val: ValRecords, Bytes: []byte{1}}} {
		if b, ok := n.appendJSON(nil); ok {
			t.Errorf("%+v: value %s for a node without one", n, b)
		}
	}
}
