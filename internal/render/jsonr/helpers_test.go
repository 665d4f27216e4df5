package jsonr

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// fixSize sets the size prefix to the frame's length.
func fixSize(b []byte) []byte {
	if len(b) >= 4 {
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	}
	return b
}

// refNode is a tree node as the format defines it, for encoding/json to
// write: the reference the hand-written writer is checked against.
type refNode struct {
	Name     string          `json:"name"`
	Path     string          `json:"path"`
	Type     string          `json:"type,omitempty"`
	Text     string          `json:"text,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	Hex      string          `json:"hex,omitempty"`
	Offset   int             `json:"offset"`
	Size     int             `json:"size"`
	Category string          `json:"category,omitempty"`
	About    string          `json:"about,omitempty"`
	Flag     string          `json:"flag,omitempty"`
	Error    string          `json:"error,omitempty"`
	Children []*refNode      `json:"children,omitempty"`
	Detached *refNode        `json:"detached,omitempty"`
}

// refTree builds the reference nodes of t under id from the tree's own
// accessors (Tree.Path for every node, not an incremental path).
func refTree(t *span.Tree, id span.ID, about bool) *refNode {
	n := t.N(id)
	r := &refNode{Name: t.DisplayName(id), Path: t.Path(id), Type: t.Type(id), Text: t.ValueText(id),
		Offset: int(n.Off), Size: int(n.Len), Category: n.Cat.String(), Flag: t.Flag(id)}
	if v, ok := t.AppendValueJSON(nil, id); ok {
		r.Value = v
	}
	if n.Val == span.ValText {
		r.Hex = hex.EncodeToString(t.ValueBytes(id))
	}
	if about {
		r.About = t.About(id)
	}
	if err := t.Err(id); err != nil {
		r.Error = err.Error()
	}
	for _, k := range t.Kids(id) {
		r.Children = append(r.Children, refTree(t, k, about))
	}
	if d := t.Detached(id); d != nil && d.Root() != span.None {
		r.Detached = refTree(d, d.Root(), about)
	}
	return r
}

// refLine is the JSON line of f as encoding/json writes it: the frame's
// fields (Hex and Body as a decode that is not lean fills them), its tree
// from refTree. f must not be lean.
func refLine(t testing.TB, f *report.Frame, about bool) []byte {
	t.Helper()
	var tree json.RawMessage = []byte("null")
	if st := f.SpanTree(); st != nil && st.Root() != span.None {
		var err error
		if tree, err = json.Marshal(refTree(st, st.Root(), about)); err != nil {
			t.Fatal(err)
		}
	}
	// Tree comes last, after report.Frame's fields, where "tree" is in
	// the format.
	v := struct {
		*report.Frame
		Tree json.RawMessage `json:"tree"`
	}{f, tree}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// The header facts that are not known are left out of the line
	// (report.Frame.Known); encoding/json writes them as 0. Each key is
	// the first of its name in the line: the frame's own keys come before
	// the body and the tree.
	for _, k := range []struct {
		fact report.HeaderFacts
		key  string
	}{{report.FactAPIKey, "api_key"}, {report.FactVersion, "version"}, {report.FactCorrelationID, "correlation_id"}, {report.FactHeaderVersion, "header_version"}} {
		if f.Known(k.fact) {
			continue
		}
		at := bytes.Index(b, []byte(`,"`+k.key+`":`))
		if at < 0 {
			t.Fatalf("no %q in %s", k.key, b)
		}
		end := at + len(k.key) + 4
		for end < len(b) && (b[end] == '-' || b[end] >= '0' && b[end] <= '9') {
			end++
		}
		b = append(b[:at], b[end:]...)
	}
	return append(b, '\n')
}
