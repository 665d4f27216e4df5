package span

import (
	"testing"

	"github.com/manifester/manifester/internal/schema"
)

// consumersTree is a small frame tree: root, a header with two leaves, a
// body with a field row and an array of two elements.
func consumersTree() (*Tree, *schema.Field, *schema.Field) {
	name := &schema.Field{Name: "Name", Type: &schema.Type{Kind: schema.KindString, Name: "string"}}
	ids := &schema.Field{Name: "TopicId", Type: &schema.Type{Kind: schema.KindUUID, Name: "uuid"}}
	b := make([]byte, 40)
	t := &Tree{Bytes: b}
	root := t.Add(None, NewDesc("Frame", "", ""), 0, CatNone)
	t.N(root).Len = 40
	h := t.Add(root, NewDesc("RequestHeader", "", ""), 0, CatHeader)
	t.N(h).Len = 4
	for i, n := range []string{"a", "b"} {
		k := t.Add(h, NewDesc(n, "int16", ""), 2*i, CatHeader)
		t.N(k).Len, t.N(k).Val = 2, ValInt
	}
	body := t.Add(root, NewDesc("Body", "", ""), 4, CatRequestBody)
	t.N(body).Len = 36
	nk := t.Add(body, FieldDesc(name), 4, CatRequestBody)
	nr := t.N(nk)
	nr.Len, nr.Val, nr.Enc, nr.VOff, nr.VLen = 4, ValString, EncCompact, 5, 3
	arr := t.Add(body, NewDesc("Ids", "[]uuid", ""), 8, CatRequestBody)
	t.N(arr).Len = 32
	for i := 0; i < 2; i++ {
		e := t.Add(arr, FieldDesc(ids), 8+16*i, CatRequestBody)
		er := t.N(e)
		er.Len, er.Val, er.Index, er.VOff, er.VLen = 16, ValUUID, int32(i), int32(8+16*i), 16
	}
	return t, name, ids
}

func TestConsumersHelpers(t *testing.T) {
	tr, name, ids := consumersTree()
	if n := tr.Count(tr.Root(), 0); n != tr.Len() {
		t.Errorf("Count = %d, want %d", n, tr.Len())
	}
	if n := tr.Count(tr.Root(), 5); n != 5 {
		t.Errorf("Count limited to 5 = %d", n)
	}
	if n := tr.Count(1, 0); n != 3 {
		t.Errorf("Count of the header = %d, want 3", n)
	}
	body := tr.Body()
	if body == None || tr.Name(body) != "Body" {
		t.Fatalf("Body = %d", body)
	}
	k := tr.KidOf(body, name)
	if k == None || tr.ValueOff(k) != 5 || !tr.Varint(k) {
		t.Errorf("KidOf(Name) = %d, value at %d, varint %v", k, tr.ValueOff(k), tr.Varint(k))
	}
	if tr.KidOf(body, ids) != None || tr.KidOf(body, nil) != None {
		t.Error("KidOf found a field that is not a child")
	}
	if tr.Varint(2) {
		t.Error("a fixed int16 reads as a varint")
	}
	tr.CutKids(body)
	l := tr.AddLocal(body, &Desc{Name: "from input", Type: "bytes"}, 4, CatRequestBody)
	if tr.Name(l) != "from input" || tr.Desc(l).ID() != 0 || tr.Kids(body)[0] != l || len(tr.Kids(body)) != 1 {
		t.Errorf("AddLocal: %q, kids %v", tr.Name(l), tr.Kids(body))
	}
}
