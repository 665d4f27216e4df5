package report

import (
	"bytes"
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// TestCheckEditsSpanTree: the round-trip check flags the differing leaf
// on the frame's span.Tree and names it in the one path syntax (an
// array element is its array's path and [i]).
func TestCheckEditsSpanTree(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	base := testframes.Request("kgo", testframes.CreateTopics(7), 1)
	at := bytes.Index(base, []byte("orders")) - 1
	if base[at] != 7 {
		t.Fatalf("expected the compact length 7 of the topic name at %d, got %x", at, base[at])
	}
	// 0x87 0x00 is 7 in two bytes: Kafka reads it, a writer uses one.
	in := slices.Clone(base)
	in[at] = 0x87
	in = fixSize(slices.Insert(in, at+1, 0))
	f := Decode(c, in, Options{Roundtrip: true})
	if f.Error != "" || f.RoundtripDiff == nil {
		t.Fatalf("error %q, diff %v", f.Error, f.RoundtripDiff)
	}
	d := f.RoundtripDiff
	if d.Field != "CreateTopicsRequest.Topics[0].Name" || d.Offset != at || d.Reason != "redundant varint bytes: Name is 2 bytes where 1 suffice" {
		t.Errorf("diff %+v", d)
	}
	tr := f.SpanTree()
	leaf := tr.LeafAt(tr.Root(), d.Offset)
	if leaf == span.None || tr.Flag(leaf) != "non-canonical" || tr.Path(leaf) != d.Field {
		t.Fatalf("leaf %d at %d: flag %q, path %q", leaf, d.Offset, tr.Flag(leaf), tr.Path(leaf))
	}
	flagged := 0
	tr.Walk(tr.Root(), func(id span.ID, _ int) {
		if tr.Flag(id) != "" {
			flagged++
		}
	})
	if flagged != 1 {
		t.Errorf("%d rows flagged, want 1", flagged)
	}
}

// TestUndecodedBytes: after a decoding error the undecoded row under the
// root holds the bytes after the error as its value.
func TestUndecodedBytes(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(4), 9)
	b[7] = 5 // v4 bytes read as v5, the first flexible version
	f := Decode(c, b, Options{})
	if f.Error == "" {
		t.Fatal("relabelled frame decoded cleanly")
	}
	tr := f.SpanTree()
	found := false
	for k := tr.N(tr.Root()).First; k != span.None; k = tr.N(k).Next {
		if n := tr.N(k); n.Val == span.ValBytes && tr.Err(k) != nil {
			found = true
			if got, want := tr.ValueBytes(k), b[n.Off:n.Off+n.Len]; len(want) == 0 || !bytes.Equal(got, want) {
				t.Errorf("undecoded row holds %x, want %x", got, want)
			}
		}
	}
	if !found {
		t.Fatal("no undecoded row under the root")
	}
}
