package lineread

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// zeros yields zero bytes forever: a device, or a binary file, read as
// JSON lines.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestObjectLine: lines are read as ReadBytes('\n') reads them; a line
// whose first byte other than white space is not "{" stops at that byte,
// and one longer than the limit stops at the limit, so that input without
// line ends costs no more memory than the limit (and, when it is no JSON
// object, none).
func TestObjectLine(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("{\"a\":1}\n  \n\t{}\n{\"b\":2}"))
	for _, want := range []string{"{\"a\":1}\n", "  \n", "\t{}\n", "{\"b\":2}"} {
		got, err := ObjectLine(r, 100)
		if string(got) != want || (err != nil && !errors.Is(err, io.EOF)) {
			t.Errorf("line %q, %v; want %q", got, err, want)
		}
	}
	if got, err := ObjectLine(r, 100); len(got) != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("after the last line: %q, %v", got, err)
	}

	var a, z runtime.MemStats
	runtime.ReadMemStats(&a)
	got, err := ObjectLine(bufio.NewReader(zeros{}), 1<<30)
	runtime.ReadMemStats(&z)
	if err != nil || string(got) != "\x00" {
		t.Errorf("zeros: %q, %v; want the first byte", got, err)
	}
	if n := z.TotalAlloc - a.TotalAlloc; n > 1<<20 {
		t.Errorf("zeros: %d bytes allocated", n)
	}
	got, err = ObjectLine(bufio.NewReader(io.MultiReader(strings.NewReader(" {"), zeros{})), 1000)
	if !errors.Is(err, ErrTooLong) || len(got) != 1000 {
		t.Errorf("an object without its line end: %d bytes, %v; want 1000 and ErrTooLong", len(got), err)
	}
}
