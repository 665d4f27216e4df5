package jsonr

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/span"
)

// TestNodeFastPathsMatchReference builds a tree with every kind of value
// the writer formats itself (integers, bytes, text, strings, counts,
// array lengths) in the shapes its fast paths must tell apart (nulls,
// notes, long values, text with quotes, HTML characters, control
// characters and non-ASCII, values held in the extras, local and renamed
// descriptors) and checks that the nodes are written exactly as
// encoding/json writes the reference made from the tree's own text and
// value accessors; once with the values' hex copied from the frame's hex
// and once made afresh.
func TestNodeFastPathsMatchReference(t *testing.T) {
	var data []byte
	put := func(b []byte) (off, n int32) {
		off = int32(len(data))
		data = append(data, b...)
		return off, int32(len(b))
	}
	tr := &span.Tree{}
	type leaf struct {
		val    span.ValueKind
		i      int64
		enc    span.Enc
		prefix int64
		null   bool
		bytes  []byte
		inAux  bool   // the value bytes held in the extras
		note   string // a note in the extras
		desc   *span.Desc
		name   string // a name in the extras
	}
	plain := span.NewDesc("Plain", "int32", "a plain field")
	errCode := span.Register(&span.Desc{Name: "ErrorCode", Type: "int16", Note: span.NoteErrorCode})
	odd := span.NewDesc(`Odd"<name>&`, `type<"&>`, `about "<&>"`)
	long := bytes.Repeat([]byte("abcdefghij"), 6)
	leaves := []leaf{
		{val: span.ValInt, i: 42}, {val: span.ValInt, i: -7, desc: errCode}, {val: span.ValInt, i: 3, desc: errCode},
		{val: span.ValInt, i: 1, note: `a "note" <b>`}, {val: span.ValInt, i: 9, desc: odd}, {val: span.ValInt, i: 5, name: "re<named>"},
		{val: span.ValBytes, bytes: []byte{1, 2, 0xab}, enc: span.EncInt32, prefix: 3},
		{val: span.ValBytes, bytes: bytes.Repeat([]byte{0xfe, 0x01, 0x7f}, 20), enc: span.EncCompact, prefix: 61},
		{val: span.ValBytes, null: true, enc: span.EncInt32, prefix: -1}, {val: span.ValBytes, enc: span.EncCompact, prefix: 1},
		{val: span.ValBytes, bytes: bytes.Repeat([]byte{0x10}, 30), inAux: true, enc: span.EncVarint, prefix: 30},
		{val: span.ValBytes, bytes: []byte{7}, note: "redacted"},
		{val: span.ValText, bytes: []byte("key-0001"), enc: span.EncVarint, prefix: 8},
		{val: span.ValText, bytes: long, enc: span.EncVarint, prefix: 60},
		{val: span.ValText, bytes: []byte(`say "hi" \ now`), enc: span.EncVarint, prefix: 14},
		{val: span.ValText, bytes: []byte("a<b>&c"), enc: span.EncVarint, prefix: 6},
		{val: span.ValText, bytes: []byte("tab\there\nnewline"), enc: span.EncVarint, prefix: 16},
		{val: span.ValText, bytes: []byte("héllo wörld"), enc: span.EncVarint, prefix: 13},
		{val: span.ValText, bytes: append(bytes.Repeat([]byte("x"), 47), "é"...), enc: span.EncVarint, prefix: 49},
		{val: span.ValText, bytes: []byte("in the extras"), inAux: true},
		{val: span.ValString, bytes: []byte("topic-a"), enc: span.EncCompact, prefix: 8},
		{val: span.ValString, bytes: long, enc: span.EncInt16, prefix: 60},
		{val: span.ValString, enc: span.EncCompact, prefix: 1}, {val: span.ValString, null: true, enc: span.EncInt16, prefix: -1},
		{val: span.ValString, bytes: []byte("<script>&amp;"), enc: span.EncInt16, prefix: 13},
		{val: span.ValString, bytes: []byte("q\"uote"), enc: span.EncInt16, prefix: 6},
		{val: span.ValString, bytes: []byte{'o', 'k', 0xff, 0xfe}, enc: span.EncInt16, prefix: 4},
		{val: span.ValString, bytes: []byte("noted"), note: "from the extras"},
		{val: span.ValCount, i: 0, enc: span.EncCompact}, {val: span.ValCount, i: 4, enc: span.EncCompact},
		{val: span.ValCount, i: -1, enc: span.EncInt32}, {val: span.ValCount, i: 12, enc: span.EncInt32},
		{val: span.ValCount, i: 2, note: "two"},
		{val: span.ValArray, i: 0}, {val: span.ValArray, i: 1}, {val: span.ValArray, i: 5}, {val: span.ValArray, null: true, i: -1},
		{val: span.ValArray, i: 3, note: "noted"},
	}
	data = append(data, 0, 0, 0, 0)
	root := tr.Add(span.None, span.NewDesc("Root", "message", ""), 0, span.CatNone)
	local := &span.Desc{Name: "local\u2028name", Type: "local type"}
	var ids []span.ID
	for i, l := range leaves {
		off, n := put(l.bytes)
		d := plain
		if l.desc != nil {
			d = l.desc
		}
		var id span.ID
		if i == 3 {
			id = tr.AddLocal(root, local, int(off), span.CatNone)
		} else {
			id = tr.Add(root, d, int(off), span.CatRecord)
		}
		r := tr.N(id)
		r.Val, r.Int, r.Enc, r.Prefix, r.Null, r.Len = l.val, l.i, l.enc, l.prefix, l.null, n
		if l.inAux {
			a := tr.Extra(id, true)
			a.Value, a.HasValue = l.bytes, true
		} else {
			r.VOff, r.VLen = off, n
		}
		if l.note != "" {
			tr.Extra(id, true).Note = l.note
		}
		if l.name != "" {
			tr.Extra(id, true).Name = l.name
		}
		ids = append(ids, id)
	}
	tr.N(root).Len = int32(len(data))
	tr.Bytes = data
	_ = ids

	for _, about := range []bool{false, true} {
		want, err := json.Marshal(refTree(tr, tr.Root(), about))
		if err != nil {
			t.Fatal(err)
		}
		for _, copied := range []bool{false, true} {
			w := treeWriter{about: about}
			if copied {
				w.b = hexout.AppendEncode([]byte("prefix"), data)
				w.hexTree, w.hex = tr, w.b[len("prefix"):]
			}
			start := len(w.b)
			w.tree(tr, tr.Root())
			if got := w.b[start:]; !bytes.Equal(got, want) {
				t.Errorf("about %v, hex copied %v: differs from the reference:\n%s", about, copied,
					cmp.Diff(strings.ReplaceAll(string(want), `},{`, "},\n{"), strings.ReplaceAll(string(got), `},{`, "},\n{")))
			}
		}
	}
}

// TestAppendInt compares appendInt with strconv around every boundary of
// its table.
func TestAppendInt(t *testing.T) {
	for _, v := range []int64{-1001, -1000, -999, -100, -10, -9, -1, 0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 123456789, 1<<63 - 1, -1 << 63} {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
	for v := int64(0); v < 2000; v++ {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}
