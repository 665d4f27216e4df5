package jsonr

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/vectors"
)

// seedRequests adds every request vector (generated now from the specs;
// no corpus is committed) as a seed.
func seedRequests(f *testing.F) {
	c := testframes.Codec(f, "4.3")
	vs, err := vectors.Generate(c)
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range vs {
		if v.Kind == "request" {
			b, _ := hex.DecodeString(v.Hex)
			f.Add(b)
		}
	}
}

// FuzzAppendLine checks, for any bytes decoded as a request, that the
// writer (lean and full reports, with descriptions) writes exactly what
// encoding/json writes for the report and its tree (refLine), and that
// the line is valid JSON. Seeds: every request vector.
//
//	go test -run XXX -fuzz FuzzAppendLine -fuzztime 1m ./internal/render/jsonr
func FuzzAppendLine(f *testing.F) {
	c := testframes.Codec(f, "4.3")
	c.Decompress = compress.Decompressor()
	seedRequests(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		o := report.Options{Roundtrip: true, NoAlternatives: len(b) > 4096}
		full := report.Decode(c, b, o)
		o.Lean = true
		lean := report.Decode(c, b, o)
		want := refLine(t, full, true)
		for _, r := range []*report.Frame{full, lean} {
			got, err := AppendLine(nil, r, Options{About: true})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("lean %v: differs from encoding/json:\n%s", r.Lean(), cmp.Diff(string(want), string(got)))
			}
		}
		line, _ := AppendLine(nil, lean, Options{})
		if !json.Valid(line) {
			t.Fatalf("invalid JSON line: %q", line)
		}
	})
}

// fuzzLimits are small, so that fuzzed frames reach every limit.
var fuzzLimits = budget.Limits{Inflate: 256 << 10, Nodes: 4096, Output: 256 << 10}

// FuzzLineBudget decodes request frames with decompression on, under a
// small budget, and checks that the line stays within the output budget
// (and a few KiB of notes) and valid JSON. Seeds are the hostile frames.
//
//	go test -run XXX -fuzz FuzzLineBudget -fuzztime 1m ./internal/render/jsonr
func FuzzLineBudget(f *testing.F) {
	c := inflating(f)
	for _, cd := range hostile.Codecs {
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(300), 300), hostile.Batch(cd, make([]byte, 100<<10), 1)))
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(40), 40), hostile.Batch(cd, hostile.DenseRecords(40), 40), hostile.Batch(cd, hostile.DenseRecords(40), 40)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, lean := range []bool{false, true} {
			var js bytes.Buffer
			fr := report.Decode(c, b, report.Options{Limits: fuzzLimits, Lean: lean})
			if err := Line(&js, fr); err != nil {
				t.Fatal(err)
			}
			if max := fr.RenderBudget().MaxOutput; int64(js.Len()) > max+outputSlack {
				t.Fatalf("output %d bytes of JSON; budget %d", js.Len(), max)
			}
			if !json.Valid(js.Bytes()) {
				t.Fatalf("invalid JSON: %.200s", js.Bytes())
			}
		}
	})
}
