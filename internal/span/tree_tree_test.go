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
