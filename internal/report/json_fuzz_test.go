package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/vectors"
)

// FuzzAppendJSON checks, for any bytes decoded as a request, that the
// fast JSON writer (lean and full reports, with descriptions) writes
// exactly what encoding/json writes for the report, and that the line is
// valid JSON. Seeds: every request vector.
//
//	go test -run XXX -fuzz FuzzAppendJSON -fuzztime 1m ./internal/report
func FuzzAppendJSON(f *testing.F) {
	c := fuzzCodec(f)
	c.Decompress = compress.Decompressor()
	seedVectors(f, c, "request", func(_ vectors.Vector, b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		o := Options{Roundtrip: true, NoAlternatives: len(b) > 4096}
		full := Decode(c, b, o)
		o.Lean = true
		lean := Decode(c, b, o)
		want, err := json.Marshal(full)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		for _, r := range []*Frame{full, lean} {
			got, err := AppendJSON(nil, r, JSONOptions{About: true})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("lean %v: differs from encoding/json:\n%s", r.lean, cmp.Diff(string(want), string(got)))
			}
		}
		line, _ := AppendJSON(nil, lean, JSONOptions{})
		if !json.Valid(line) {
			t.Fatalf("invalid JSON line: %q", line)
		}
	})
}
