package release

import (
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

func load(t *testing.T) *schema.Registry {
	t.Helper()
	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestNew(t *testing.T) {
	reg := load(t)
	r := New("x", "somewhere", reg)
	if r.Label != "x" || r.Path != "somewhere" || r.Reg != reg || r.Codec == nil || r.Codec.Reg != reg {
		t.Fatalf("New = %+v", r)
	}
}

func TestComplete(t *testing.T) {
	reg := load(t)
	withReg := &Release{Label: "a", Reg: reg}
	if err := withReg.Complete(); err != nil || withReg.Codec == nil || withReg.Codec.Reg != reg {
		t.Fatalf("registry only: %v, codec %v", err, withReg.Codec)
	}
	c := codec.New(reg)
	withCodec := &Release{Label: "b", Codec: c}
	if err := withCodec.Complete(); err != nil || withCodec.Reg != reg || withCodec.Codec != c {
		t.Fatalf("codec only: %v, %+v", err, withCodec)
	}
	for name, r := range map[string]*Release{
		"nil":      nil,
		"empty":    {Label: "e"},
		"mismatch": {Label: "m", Reg: load(t), Codec: c},
	} {
		if err := r.Complete(); err == nil {
			t.Errorf("%s: Complete succeeded", name)
		}
	}
}
