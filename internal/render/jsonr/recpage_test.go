package jsonr

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/recpage"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

// topKeys returns the keys of the JSON object doc in order.
func topKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v", err)
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// fieldKeys returns the JSON names of v's struct fields in order,
// leaving out "-" and omitempty fields that are empty.
func fieldKeys(v any) []string {
	rv := reflect.ValueOf(v).Elem()
	var keys []string
	for i := 0; i < rv.NumField(); i++ {
		name, opts, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		if name == "-" || name == "" || opts == "omitempty" && rv.Field(i).IsZero() {
			continue
		}
		keys = append(keys, name)
	}
	return keys
}

// TestRecordPageDocuments: the document of every internal record type
// at every version of trunk's record schemas is what encoding/json
// writes for the page and its tree (refTree), keys in the page's field
// order with "tree" before "schema", indented as the site and show print it.
func TestRecordPageDocuments(t *testing.T) {
	reg, err := schema.Load(testshared.Spec(t, "trunk"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := recschema.Load(testshared.Path(t, "kafka-records", "trunk"))
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	c.SetRecordSchemas(recs)
	n := 0
	for _, r := range recs.Messages() {
		for _, v := range recpage.Versions(r.Msg) {
			p, err := recpage.Build(c, r, v)
			if err != nil {
				t.Fatalf("%s v%d: %v", r.Msg.Name, v, err)
			}
			n++
			got := AppendRecordPage(nil, p)
			tree, err := json.Marshal(refTree(p.Spans, p.Spans.Root(), true))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := json.Marshal(struct {
				*recpage.Page
				Tree json.RawMessage `json:"tree"`
			}{p, tree})
			if err != nil {
				t.Fatal(err)
			}
			var g, w map[string]any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s v%d: %v", r.Msg.Name, v, err)
			}
			json.Unmarshal(ref, &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Fatalf("%s v%d (-encoding/json +AppendRecordPage):\n%s", r.Msg.Name, v, diff)
			}
			// The tree is written from p.Spans, before the schema.
			want := fieldKeys(p)
			if !slices.Contains(want, "tree") {
				want = slices.Insert(want, slices.Index(want, "schema"), "tree")
			}
			if k := topKeys(t, got); !slices.Equal(k, want) {
				t.Fatalf("%s v%d: keys %v, want %v", r.Msg.Name, v, k, want)
			}
			// The tree's bytes are the reference's: key order and escaping.
			if !bytes.Contains(got, append(append([]byte(`"tree":`), tree...), `,"schema":`...)) {
				t.Fatalf("%s v%d: the tree is not encoding/json's", r.Msg.Name, v)
			}
			doc, err := RecordPageDocument(p)
			if err != nil || !json.Valid(doc) || !bytes.HasSuffix(doc, []byte("}\n")) || !bytes.HasPrefix(doc, []byte("{\n  \"release\": ")) {
				t.Fatalf("%s v%d: document (%v): %.80s", r.Msg.Name, v, err, doc)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d record pages", n)
	}
	var nilTree *span.Tree
	if s := string(AppendTree(nil, nilTree, Options{})); s != "null" {
		t.Errorf("nil tree: %s", s)
	}
}
