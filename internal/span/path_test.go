package span

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// refPath is the obvious definition of Path: display names from the root's
// child down, joined with dots.
func refPath(n *Node) string {
	var parts []string
	for x := n; x != nil && x.Parent != nil; x = x.Parent {
		name := x.Name
		if x.Index >= 0 {
			name += "[" + strconv.Itoa(int(x.Index)) + "]"
		}
		parts = append([]string{name}, parts...)
	}
	return strings.Join(parts, ".")
}

func TestPathMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	names := []string{"", "Topics", "Partitions", "x", "tagged_fields", "Record"}
	var b Builder
	root := b.New(nil, "Root", "", 0, CatNone)
	nodes := []*Node{root}
	for i := 0; i < 2000; i++ {
		parent := nodes[rng.IntN(len(nodes))]
		n := b.New(parent, names[rng.IntN(len(names))], "", 0, CatNone)
		switch rng.IntN(3) {
		case 0:
			n.Index = int32(rng.IntN(12))
		case 1:
			n.Index = int32(rng.IntN(1_000_000))
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		if got, want := n.Path(), refPath(n); got != want {
			t.Fatalf("Path() = %q, want %q", got, want)
		}
	}
	if got := root.Path(); got != "" {
		t.Errorf("root Path() = %q, want empty", got)
	}
	leaf := &Node{Name: "Resources", Index: 0, Parent: &Node{Name: "AlterConfigsRequest", Index: -1, Parent: root}}
	if got := leaf.Path(); got != "AlterConfigsRequest.Resources[0]" {
		t.Errorf("Path() = %q", got)
	}
}

func BenchmarkPath(b *testing.B) {
	var bl Builder
	n := bl.New(nil, "Root", "", 0, CatNone)
	for _, name := range []string{"MetadataResponse", "Topics", "Partitions", "ReplicaNodes"} {
		n = bl.New(n, name, "", 0, CatNone)
		n.Index = 17
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = n.Path()
	}
}
