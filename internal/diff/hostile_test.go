package diff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// synthRegistry builds a registry of one synthetic API (key 1010) from
// its request's validVersions and fields (JSON) and its response's.
func synthRegistry(t testing.TB, label, valid, reqFields, respFields string) *schema.Registry {
	t.Helper()
	var files []*spec.File
	for name, src := range map[string]string{
		"SynthRequest.json": `{"apiKey": 1010, "type": "request", "name": "SynthRequest", "validVersions": "` + valid +
			`", "flexibleVersions": "0+", "fields": [` + reqFields + `]}`,
		"SynthResponse.json": `{"apiKey": 1010, "type": "response", "name": "SynthResponse", "validVersions": "` + valid +
			`", "flexibleVersions": "0+", "fields": [` + respFields + `]}`,
	} {
		f, err := spec.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	reg, err := schema.Build(files)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	return reg
}

// int32Fields writes n int32 fields named prefix0, prefix1, ...
func int32Fields(prefix string, n int) []string {
	var fs []string
	for i := range n {
		fs = append(fs, fmt.Sprintf(`{"name": "%s%d", "type": "int32", "versions": "0+"}`, prefix, i))
	}
	return fs
}

// TestRenamesLinear: between two releases, each added field was checked
// against every removed one by working out both fields' places on the
// wire, each a walk over the struct's fields: cubic in the field count.
// A release with n fields X removed from the front and n fields Y added at
// the end, around n fields P kept (no renames: the places differ), took
// `diff --release` 3.6 s at n = 1,000 (a 100 KB spec) and minutes at
// 4,000. The allocations (each place is a string) count that work.
func TestRenamesLinear(t *testing.T) {
	const n = 600
	x, p, y := int32Fields("X", n), int32Fields("P", n), int32Fields("Y", n)
	a := synthRegistry(t, "a", "0", strings.Join(append(x, p...), ","), "")
	b := synthRegistry(t, "b", "0", strings.Join(append(p, y...), ","), "")
	var d *ReleaseDiff
	allocs := testing.AllocsPerRun(1, func() { d = Releases(a, b) })
	if len(d.Changed) != 1 || len(d.Changed[0].Redefined) != 1 {
		t.Fatalf("changed: %+v", d.Changed)
	}
	sd := d.Changed[0].Redefined[0].Request
	if len(sd) != 1 || len(sd[0].Added) != n || len(sd[0].Removed) != n || len(sd[0].Changed) != 0 {
		t.Fatalf("request: %d structs; want %d added and removed, none changed", len(sd), n)
	}
	if limit := float64(100 * 3 * n); allocs > limit {
		t.Errorf("a release diff of %d fields made %.0f allocations, want <= %.0f", 3*n, allocs, limit)
	}
}

// TestReleaseFieldMoved: two releases listing one version's fields in
// another order put other bytes on the wire (an int32 where a string
// was), but the fields paired by name had nothing to compare, so the
// release diff said the API had not changed. The field out of order is
// reported with a change of property "place".
func TestReleaseFieldMoved(t *testing.T) {
	const (
		fa = `{"name": "A", "type": "int32", "versions": "0+"}`
		fb = `{"name": "B", "type": "string", "versions": "0+"}`
		fc = `{"name": "C", "type": "int8", "versions": "0+"}`
		ft = `{"name": "T", "type": "int8", "versions": "0+", "taggedVersions": "0+", "tag": 0}`
	)
	a := synthRegistry(t, "a", "0-1", fa+","+fb+","+fc, ft+","+fa+","+fb)
	b := synthRegistry(t, "b", "0-1", fb+","+fa+","+fc, fa+","+ft+","+fb)
	d := Releases(a, b)
	if len(d.Changed) != 1 {
		t.Fatalf("changed: %+v", d.Changed)
	}
	c := d.Changed[0]
	if len(c.Redefined) != 2 {
		t.Fatalf("redefined: %+v", c.Redefined)
	}
	for _, r := range c.Redefined {
		want := []StructDiff{{Struct: "SynthRequest", Changed: []FieldChange{{Name: "B", Changes: []Change{{Property: "place", From: "1", To: "0"}}}}}}
		if diff := cmp.Diff(want, r.Request); diff != "" {
			t.Errorf("v%d request (-want +got):\n%s", r.Version, diff)
		}
		if r.Response != nil {
			t.Errorf("v%d response: a tagged field's place among the others is not on the wire, got %+v", r.Version, r.Response)
		}
	}
	var out bytes.Buffer
	if err := d.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if want := "v0 request (body): ~B place 1 -> 0\n"; !strings.Contains(out.String(), want) {
		t.Errorf("%q is missing:\n%s", want, out.String())
	}
	// Within one release the order is the spec's: no version pair moves.
	vd, err := Versions(codec.New(b), b.APIs[0], 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(vd.Request.Structs) != 0 || len(vd.Response.Structs) != 0 {
		t.Errorf("v0 -> v1: %+v %+v", vd.Request.Structs, vd.Response.Structs)
	}
}

// TestRenameNeedsSameFlexibility: a string field's own flexibleVersions
// decides whether it is written compact; a field removed and one added at
// the same place, of the same type but written one compact and one not,
// were reported as one field renamed "(same bytes)".
func TestRenameNeedsSameFlexibility(t *testing.T) {
	a := synthRegistry(t, "a", "0", `{"name": "A", "type": "string", "versions": "0+", "flexibleVersions": "none"}`, "")
	b := synthRegistry(t, "b", "0", `{"name": "B", "type": "string", "versions": "0+"}`, "")
	d := Releases(a, b)
	if len(d.Changed) != 1 || len(d.Changed[0].Redefined) != 1 {
		t.Fatalf("changed: %+v", d.Changed)
	}
	sd := d.Changed[0].Redefined[0].Request
	if len(sd) != 1 || len(sd[0].Removed) != 1 || len(sd[0].Added) != 1 || len(sd[0].Changed) != 0 {
		t.Errorf("request: %+v; want A removed and B added", sd)
	}
	// The same flexibility on both sides is a rename.
	c := synthRegistry(t, "c", "0", `{"name": "C", "type": "string", "versions": "0+", "flexibleVersions": "none"}`, "")
	sd = Releases(a, c).Changed[0].Redefined[0].Request
	if len(sd) != 1 || len(sd[0].Changed) != 1 || sd[0].Changed[0].Changes[0].Property != "name" {
		t.Errorf("request: %+v; want A renamed to C", sd)
	}
}
