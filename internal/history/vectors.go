package history

import (
	"bytes"
	"fmt"

	"github.com/manifester/manifester/internal/vectors"
)

// Vectors returns the test vectors of the release labelled label: the
// smallest request and response of every API at every version that
// release defines.
func (h *History) Vectors(label string) ([]vectors.Vector, error) {
	r, ok := h.Release(label)
	if !ok {
		return nil, fmt.Errorf("no release labelled %q is loaded (loaded: %v)", label, h.Labels())
	}
	vs, err := vectors.Generate(r.Codec)
	if err != nil {
		return nil, fmt.Errorf("vectors of %s: %w", label, err)
	}
	return vs, nil
}

// VectorLines returns the test vectors of the release labelled label as
// JSON lines, the body of /vectors/<label>.jsonl.
func (h *History) VectorLines(label string) ([]byte, error) {
	vs, err := h.Vectors(label)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := vectors.Write(&buf, vs); err != nil {
		return nil, fmt.Errorf("vectors of %s: %w", label, err)
	}
	return buf.Bytes(), nil
}
