package span

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// refPath is the obvious definition of Path: names from the root's child
// down, joined with dots, an element of an array or records field written
// as its parent's path and "[i]", another indexed row as "name[i]".
func refPath(t *Tree, id ID) string {
	var parts []string
	for x := id; x != None && t.N(x).Parent != None; x = t.N(x).Parent {
		n := t.N(x)
		switch {
		case n.Index >= 0 && inArray(t.N(n.Parent).Val):
			parts = append([]string{"[" + strconv.Itoa(int(n.Index)) + "]"}, parts...)
		case n.Index >= 0:
			parts = append([]string{"." + t.Name(x) + "[" + strconv.Itoa(int(n.Index)) + "]"}, parts...)
		default:
			parts = append([]string{"." + t.Name(x)}, parts...)
		}
	}
	return strings.TrimPrefix(strings.Join(parts, ""), ".")
}

func TestPathMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var descs []*Desc
	for _, name := range []string{"Topics", "Partitions", "x", "tagged_fields", "Record"} {
		descs = append(descs, NewDesc(name, "", ""))
	}
	tr := &Tree{}
	root := tr.Add(None, NewDesc("Root", "", ""), 0, CatNone)
	ids := []ID{root}
	for i := 0; i < 2000; i++ {
		parent := ids[rng.IntN(len(ids))]
		id := tr.Add(parent, descs[rng.IntN(len(descs))], 0, CatNone)
		n := tr.N(id)
		switch rng.IntN(4) {
		case 0:
			n.Index = int32(rng.IntN(12))
		case 1:
			n.Index = int32(rng.IntN(1_000_000))
		case 2:
			n.Val = ValArray
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if got, want := tr.Path(id), refPath(tr, id); got != want {
			t.Fatalf("Path(%d) = %q, want %q", id, got, want)
		}
	}
	if got := tr.Path(root); got != "" {
		t.Errorf("root Path() = %q, want empty", got)
	}
}

func BenchmarkPath(b *testing.B) {
	tr := &Tree{}
	id := tr.Add(None, NewDesc("Root", "", ""), 0, CatNone)
	for _, name := range []string{"MetadataResponse", "Topics", "Partitions", "ReplicaNodes"} {
		id = tr.Add(id, NewDesc(name, "", ""), 0, CatNone)
		tr.N(id).Index = 17
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 128)
	for b.Loop() {
		buf = tr.AppendPath(buf[:0], id)
	}
}

// TestDisplayName: a row's name, with "[i]" for an indexed one, whether
// made as a string or appended.
func TestDisplayName(t *testing.T) {
	tr := &Tree{}
	root := tr.Add(None, NewDesc("Root", "", ""), 0, CatNone)
	elem := tr.Add(root, NewDesc("Topic", "", ""), 0, CatNone)
	tr.N(elem).Index = 2147483647
	for _, c := range []struct {
		id   ID
		want string
	}{{root, "Root"}, {elem, "Topic[2147483647]"}} {
		if got := tr.DisplayName(c.id); got != c.want {
			t.Errorf("DisplayName = %q, want %q", got, c.want)
		}
		if got := string(tr.AppendDisplayName([]byte("x."), c.id)); got != "x."+c.want {
			t.Errorf("AppendDisplayName = %q, want %q", got, "x."+c.want)
		}
	}
}
