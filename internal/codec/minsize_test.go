package codec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// TestMinFrameSizeMatchesKmsg: the smallest frame of every 4.3 (api,
// version, kind) kmsg knows is as long as kmsg's frame of a message it
// made and left empty (every array empty or null, every string empty or
// null, every nullable struct null, tagged fields at their defaults).
func TestMinFrameSizeMatchesKmsg(t *testing.T) {
	rel := loadRelease(t, kmsgLabel)
	compared := 0
	for _, tr := range triples(rel.reg) {
		msg, why := kmsgMessage(tr)
		if msg == nil {
			t.Logf("%s: %s", tr, why)
			continue
		}
		frame := kmsgFrame(tr, msg)
		n, ok := rel.c.MinFrameSize(tr.msg(), tr.v)
		if !ok {
			t.Errorf("%s: no smallest frame size", tr)
			continue
		}
		if n != len(frame) {
			t.Errorf("%s: smallest frame %d bytes, kmsg's empty message %d (% x)", tr, n, len(frame), frame)
		}
		compared++
	}
	if compared < minCompared {
		t.Errorf("compared %d triples, want at least %d", compared, minCompared)
	}
	if _, ok := rel.c.MinFrameSize(rel.reg.APIs[0].Request, -1); ok {
		t.Errorf("a smallest frame size at version -1")
	}
}

// TestMinFrameSizeBuiltInHeaders: without the header specs (the built-in
// header layouts), every frame's smallest size is the one with them.
func TestMinFrameSizeBuiltInHeaders(t *testing.T) {
	rel := loadRelease(t, kmsgLabel)
	dir := t.TempDir()
	for _, name := range []string{"ProduceRequest.json", "ProduceResponse.json", "ApiVersionsRequest.json", "ApiVersionsResponse.json", "MetadataRequest.json", "MetadataResponse.json"} {
		b, err := os.ReadFile(filepath.Join(specRoot, kmsgLabel, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if reg.RequestHeader != nil || reg.ResponseHeader != nil {
		t.Fatal("header specs loaded from a directory without them")
	}
	c := codec.New(reg)
	checked := 0
	for _, tr := range triples(reg) {
		m, _ := rel.reg.Message(tr.msg().Name)
		want, ok := rel.c.MinFrameSize(m, tr.v)
		got, ok2 := c.MinFrameSize(tr.msg(), tr.v)
		if !ok || !ok2 || got != want {
			t.Errorf("%s: smallest frame %d (%v) without the header specs, %d (%v) with them", tr, got, ok2, want, ok)
		}
		checked++
	}
	if checked < 40 {
		t.Errorf("checked %d triples", checked)
	}
}
