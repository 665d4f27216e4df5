package span

import (
	"encoding/hex"
	"strconv"
	"testing"
)

// valueTextRef is ValueText as first written, with string concatenation:
// the definition that AppendValueText must reproduce.
func valueTextRef(n valueView) string {
	lenNote := func(e Enc, prefix int64) string {
		switch e {
		case EncInt16:
			return " (int16 len=" + strconv.FormatInt(prefix, 10) + ")"
		case EncInt32:
			return " (int32 len=" + strconv.FormatInt(prefix, 10) + ")"
		case EncCompact:
			if prefix == 0 {
				return " (compact, 0)"
			}
			return " (compact, len+1=" + strconv.FormatInt(prefix, 10) + ")"
		case EncVarint:
			return " (varint len=" + strconv.FormatInt(prefix, 10) + ")"
		}
		return ""
	}
	plural := func(n int, word string) string {
		if n == 1 {
			return "1 " + word
		}
		return strconv.Itoa(n) + " " + word + "s"
	}
	var s string
	switch n.Val {
	case ValNone:
		return ""
	case ValInt:
		s = "= " + strconv.FormatInt(n.Int, 10)
	case ValBool:
		s = "= " + strconv.FormatBool(n.Int != 0)
	case ValFloat:
		s = "= " + strconv.FormatFloat(n.Float, 'g', -1, 64)
	case ValString:
		if n.Null {
			s = "= null" + lenNote(n.Enc, n.Prefix)
		} else if len(n.Bytes) > ShownText {
			s = "= " + strconv.Quote(string(n.Bytes[:ShownText])) + "..." + lenNote(n.Enc, n.Prefix)
		} else {
			s = "= " + strconv.Quote(string(n.Bytes)) + lenNote(n.Enc, n.Prefix)
		}
	case ValBytes, ValRecords:
		switch {
		case n.Null:
			s = "= null" + lenNote(n.Enc, n.Prefix)
		case n.Val == ValRecords:
			s = "= " + plural(len(n.Bytes), "byte") + lenNote(n.Enc, n.Prefix)
		case len(n.Bytes) > ShownHex:
			s = "= 0x" + hex.EncodeToString(n.Bytes[:ShownHex]) + "..." + lenNote(n.Enc, n.Prefix)
		default:
			s = "= 0x" + hex.EncodeToString(n.Bytes) + lenNote(n.Enc, n.Prefix)
		}
	case ValUUID:
		s = "= " + FormatUUID(n.Bytes)
	case ValCount:
		s = "= " + strconv.FormatInt(n.Int, 10)
		switch {
		case n.Enc == EncCompact && n.Int == 0:
			s += " (compact, null)"
		case n.Enc == EncCompact:
			s += " (compact, n+1)"
		case n.Int == -1:
			s += " (null)"
		}
	case ValArray:
		if n.Null {
			s = "= null"
		} else {
			s = "= " + plural(int(n.Int), "element")
		}
	case ValStruct:
		if n.Null {
			s = "= null"
		} else {
			s = "= struct"
		}
	case ValPresence:
		s = "= " + strconv.FormatInt(n.Int, 10)
		if n.Int < 0 || (n.Enc == EncCompact && n.Int == 0) {
			s += " (null)"
		} else {
			s += " (present)"
		}
	}
	if n.Note != "" {
		s += " (" + n.Note + ")"
	}
	return s
}

// TestAppendValueText checks ValueText and AppendValueText against the
// reference definition for every value kind, length encoding, null,
// long and invalid UTF-8 strings, long byte strings, odd UUIDs and notes.
func TestAppendValueText(t *testing.T) {
	long := make([]byte, 100)
	for i := range long {
		long[i] = byte('a' + i%26)
	}
	values := [][]byte{nil, {}, []byte("orders"), []byte("tab\there \"q\" é"), {0xff, 0xfe, 'x'}, long,
		[]byte("\u2028<script>&"), make([]byte, 16), {1, 2, 3}}
	var nodes []valueView
	for _, val := range []ValueKind{ValNone, ValInt, ValBool, ValFloat, ValString, ValBytes, ValUUID, ValCount, ValArray, ValStruct, ValRecords, ValPresence} {
		for _, enc := range []Enc{EncNone, EncInt16, EncInt32, EncCompact, EncVarint} {
			for _, null := range []bool{false, true} {
				for _, i := range []int64{-1, 0, 1, 2, 1 << 40} {
					for _, note := range []string{"", "AlterConfigs"} {
						for _, b := range values {
							nodes = append(nodes, valueView{Val: val, Enc: enc, Null: null, Int: i, Float: float64(i) / 3, Bytes: b, Prefix: i + 1, Note: note})
						}
					}
				}
			}
		}
	}
	for _, n := range nodes {
		want := valueTextRef(n)
		if got := string(n.appendText(nil)); got != want {
			t.Fatalf("%+v: ValueText %q, want %q", n, got, want)
		}
		if got := string(n.appendText([]byte("x"))); got != "x"+want {
			t.Fatalf("%+v: AppendValueText %q, want %q", n, got, "x"+want)
		}
	}
}

// BenchmarkValueText measures formatting a typical leaf.
func BenchmarkValueText(b *testing.B) {
	n := valueView{Val: ValString, Enc: EncCompact, Bytes: []byte("topic-with-a-longish-name"), Prefix: 26}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = n.appendText(buf[:0])
	}
}
