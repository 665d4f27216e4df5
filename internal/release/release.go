// Package release holds one loaded Kafka spec release: its label, where it
// was loaded from, its registry and the codec over that registry. The CLI
// loads releases (--spec), the site is built from them (package site) and
// the history compares them (package history); all three share this type.
package release

import (
	"fmt"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// Release is one loaded spec release. Reg and Codec describe the same
// specs (Codec.Reg == Reg); [Release.Complete] fills whichever is missing.
type Release struct {
	// Label names the release ("4.3", or a --spec label).
	Label string
	// Path is what was loaded, when known: a release number given as
	// --spec is resolved to where its specs were found.
	Path  string
	Reg   *schema.Registry
	Codec *codec.Codec
}

// New returns the release of reg under label, with a codec over reg.
func New(label, path string, reg *schema.Registry) *Release {
	return &Release{Label: label, Path: path, Reg: reg, Codec: codec.New(reg)}
}

// Complete gives a release with only a registry its codec, and one with
// only a codec its registry. It fails for a nil release, one with neither,
// or one whose codec is over another registry.
func (r *Release) Complete() error {
	switch {
	case r == nil:
		return fmt.Errorf("release: nil release")
	case r.Reg == nil && r.Codec == nil:
		return fmt.Errorf("release %q: no registry", r.Label)
	case r.Codec == nil:
		r.Codec = codec.New(r.Reg)
	case r.Reg == nil:
		r.Reg = r.Codec.Reg
	case r.Codec.Reg != r.Reg:
		return fmt.Errorf("release %q: its codec is over another registry", r.Label)
	}
	return nil
}
