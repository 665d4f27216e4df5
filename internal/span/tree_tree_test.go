package span

import "testing"

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

// TestClearUnread: nodes that cover no bytes lose their values (an int, a
// count, a string's range, a null mark); nodes that cover bytes keep
// theirs, and so do an unknown tag's empty data and nodes outside the
// subtree.
func TestClearUnread(t *testing.T) {
	d := NewDesc("f", "int32", "")
	tr := &Tree{}
	tr.Reset([]byte{0, 0, 0, 7, 0, 1})
	root := tr.Add(None, NewDesc("Root", "", ""), 0, CatNone)
	read := tr.AddLeaf(root, d, 0, 4, CatNone, ValInt, 7)
	group := tr.Add(root, NewDesc("g", "", ""), 4, CatNone)
	count := tr.AddLeaf(group, d, 4, 0, CatNone, ValCount, 0)
	str := tr.AddLeaf(group, d, 4, 0, CatNone, ValString, 0)
	tr.N(str).Null = true
	tagData := tr.AddLeaf(group, d, 4, 0, CatNone, ValBytes, 0) // an unknown tag of size 0
	other := tr.Add(None, NewDesc("Other", "", ""), 6, CatNone)
	outside := tr.AddLeaf(other, d, 6, 0, CatNone, ValInt, 0)
	tr.ClearUnread(root)
	if n := tr.N(read); n.Val != ValInt || n.Int != 7 {
		t.Errorf("a node of 4 bytes lost its value: %+v", *n)
	}
	for _, id := range []ID{count, str} {
		if n := tr.N(id); n.Val != ValNone || n.Null {
			t.Errorf("%s: a node of no bytes kept its value: %+v", tr.Path(id), *n)
		}
	}
	if tr.N(tagData).Val != ValBytes {
		t.Error("the empty data of an unknown tag (bytes with no prefix of their own) lost its value")
	}
	if tr.N(outside).Val != ValInt {
		t.Error("a node outside the subtree was cleared")
	}
}

// TestClearUnreadKeepsPrefixOnly: a string, bytes or records node whose
// prefix was read but whose bytes are not what the prefix says (cut
// short, or a negative length) keeps its prefix and no value, shown as
// "no value (...)" with no JSON value; one whose bytes are all there, a
// null one, and an empty compact one keep their values.
func TestClearUnreadKeepsPrefixOnly(t *testing.T) {
	d := NewDesc("s", "string", "")
	tr := &Tree{}
	tr.Reset([]byte{0, 5, 'a', 'b', 0, 2, 'a', 'b', 0xff, 0xff, 3, 'a', 'b', 1, 0xff, 0xfb, 0, 0, 0, 9})
	root := tr.Add(None, NewDesc("Root", "", ""), 0, CatNone)
	leaf := func(off, n, voff, vlen int, val ValueKind, e Enc, prefix int64) ID {
		id := tr.AddLeaf(root, d, off, n, CatNone, val, 0)
		r := tr.N(id)
		r.Enc, r.Prefix, r.VOff, r.VLen = e, prefix, int32(voff), int32(vlen)
		return id
	}
	cut := leaf(0, 2, 0, 0, ValString, EncInt16, 5)
	whole := leaf(4, 4, 6, 2, ValString, EncInt16, 2)
	null := leaf(8, 2, 0, 0, ValString, EncInt16, -1)
	tr.N(null).Null = true
	compactCut := leaf(10, 1, 0, 0, ValBytes, EncCompact, 3)
	empty := leaf(13, 1, 0, 0, ValString, EncCompact, 1)
	negative := leaf(14, 2, 0, 0, ValString, EncInt16, -5)
	records := leaf(16, 4, 0, 0, ValRecords, EncInt32, 9)
	tr.ClearUnread(root)
	for id, want := range map[ID]string{
		cut:        "no value (int16 len=5)",
		compactCut: "no value (compact, len+1=3)",
		negative:   "no value (int16 len=-5)",
		records:    "no value (int32 len=9)",
		whole:      `= "ab" (int16 len=2)`,
		null:       "= null (int16 len=-1)",
		empty:      `= "" (compact, len+1=1)`,
	} {
		if got := tr.ValueText(id); got != want {
			t.Errorf("node at %d: text %q, want %q", tr.N(id).Off, got, want)
		}
		_, ok := tr.AppendValueJSON(nil, id)
		if prefixOnly := tr.N(id).Val == ValPrefixOnly; ok == prefixOnly {
			t.Errorf("node at %d: prefix only %v, but a JSON value %v", tr.N(id).Off, prefixOnly, ok)
		}
	}
}
