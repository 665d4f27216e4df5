package span

import (
	"errors"
	"testing"
)

// TestPathOfIndexedRows: an element of an array or of a records field is
// written as its parent's path and [i]; an indexed row under anything
// else (a Record of a RecordBatch) keeps its name.
func TestPathOfIndexedRows(t *testing.T) {
	d := func(name string) *Desc { return Register(&Desc{Name: name}) }
	tr := &Tree{}
	tr.Reset(make([]byte, 10))
	root := tr.Add(None, d("Request"), 0, CatNone)
	body := tr.Add(root, d("ProduceRequest"), 0, CatRequestBody)
	recs := tr.Add(body, d("Records"), 0, CatRequestBody)
	tr.N(recs).Val = ValRecords
	batch := tr.Add(recs, d("RecordBatch"), 0, CatRecordBatch)
	tr.N(batch).Index, tr.N(batch).Val = 2, ValStruct
	rec := tr.Add(batch, d("Record"), 0, CatRecord)
	tr.N(rec).Index, tr.N(rec).Val = 5, ValStruct
	key := tr.Add(rec, d("key"), 0, CatRecord)
	arr := tr.Add(body, d("Topics"), 0, CatRequestBody)
	tr.N(arr).Val = ValArray
	elem := tr.Add(arr, d("TopicData"), 0, CatRequestBody)
	tr.N(elem).Index = 1
	for id, want := range map[ID]string{
		root: "", body: "ProduceRequest", batch: "ProduceRequest.Records[2]",
		rec: "ProduceRequest.Records[2].Record[5]", key: "ProduceRequest.Records[2].Record[5].key",
		elem: "ProduceRequest.Topics[1]",
	} {
		if got := tr.Path(id); got != want {
			t.Errorf("Path(%d) = %q, want %q", id, got, want)
		}
	}
}

// TestToNode converts a small tree with a note, a flag, an error, a float,
// value bytes, an unlinked row and a detached tree.
func TestToNode(t *testing.T) {
	tr := &Tree{}
	tr.Reset([]byte("abcdefgh"))
	root := tr.Add(None, Register(&Desc{Name: "root", Type: "message"}), 0, CatNone)
	tr.N(root).Len = 8
	s := tr.Add(root, Register(&Desc{Name: "s", Type: "string", About: "a string"}), 0, CatRequestBody)
	n := tr.N(s)
	n.Val, n.Len, n.VOff, n.VLen, n.Enc, n.Prefix = ValString, 4, 1, 3, EncCompact, 4
	a := tr.Extra(s, true)
	a.Note, a.Flag, a.Err = "note", "flag", errors.New("bad")
	f := tr.Add(root, Register(&Desc{Name: "f", Type: "float64"}), 4, CatRequestBody)
	tr.N(f).SetFloat(2.5)
	tr.N(f).Len = 4
	gone := tr.Add(f, Register(&Desc{Name: "gone"}), 4, CatRequestBody)
	_ = gone
	tr.CutKids(f)
	sub := &Tree{}
	sub.Reset([]byte("xyz"))
	sr := sub.Add(None, Register(&Desc{Name: "decompressed"}), 0, CatRecord)
	sub.N(sr).Val, sub.N(sr).VLen, sub.N(sr).Len = ValBytes, 3, 3
	tr.Extra(f, true).Detached = sub

	nd := tr.ToNode()
	if nd.Name != "root" || nd.Len != 8 || len(nd.Kids) != 2 {
		t.Fatalf("root %+v", nd)
	}
	k := nd.Kids[0]
	if k.Parent != nd || k.Name != "s" || k.About != "a string" || string(k.Bytes) != "bcd" || k.Note != "note" || k.Flag != "flag" || k.Err == nil || k.ValueText() != tr.ValueText(s) {
		t.Errorf("string node %+v", k)
	}
	g := nd.Kids[1]
	if g.Float != 2.5 || g.Int != 0 || len(g.Kids) != 0 || g.Detached == nil || string(g.Detached.Bytes) != "xyz" || g.ValueText() != "= 2.5" {
		t.Errorf("float node %+v", g)
	}
}
