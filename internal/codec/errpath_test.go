package codec_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// errorRow checks that a failed decode's error is set on exactly one row
// of its tree (the "undecoded" leaf after it aside) and that the error's
// path is that row's path, prefixed with the message name for a body
// decoded alone (whose root is the body). It returns the row.
func errorRow(t *testing.T, tr *span.Tree, err error, body string) span.ID {
	t.Helper()
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %T %v is not a *wire.DecodeError", err, err)
	}
	row := span.None
	tr.Walk(tr.Root(), func(id span.ID, _ int) {
		if tr.Err(id) == error(de) && tr.Name(id) != "undecoded" {
			if row != span.None {
				t.Fatalf("error %v set on rows %q and %q", err, tr.Path(row), tr.Path(id))
			}
			row = id
		}
	})
	if row == span.None {
		t.Fatalf("error %v is set on no row", err)
	}
	want := tr.Path(row)
	if body != "" {
		want = body
		if p := tr.Path(row); p != "" {
			want += "." + p
			if p[0] == '[' {
				want = body + p
			}
		}
	}
	if de.Path != want {
		t.Fatalf("error path %q, its row's path %q (%v)", de.Path, want, err)
	}
	return row
}

// hostileFrames are the inputs whose failing decodes TestErrorPathIsRowPath
// checks: the fuzz corpora, every smallest request and response of 4.3 cut
// at every byte and with each length or count prefix lying, random byte
// flips of those and of the bench corpus (records, compressed batches),
// and the hostile package's crafted frames.
func hostileFrames(t *testing.T, c *codec.Codec) (reqs [][]byte, resps []respFrame) {
	_, vs := fuzzSetup(t)
	rng := rand.New(rand.NewPCG(13, 13))
	flip := func(b []byte, n int) [][]byte {
		var out [][]byte
		for i := 0; i < n && len(b) > 4; i++ {
			m := append([]byte(nil), b...)
			m[4+rng.IntN(len(m)-4)] ^= byte(1 + rng.IntN(255))
			out = append(out, m)
		}
		return out
	}
	for _, v := range vs {
		b, _ := hex.DecodeString(v.Hex)
		api, _ := c.Reg.API(v.APIKey)
		var muts [][]byte
		for cut := 0; cut < len(b); cut++ {
			m := append([]byte(nil), b[:cut]...)
			if cut >= 4 {
				binary.BigEndian.PutUint32(m, uint32(cut-4))
			}
			muts = append(muts, m)
		}
		f, err := decodeVector(c, v.Kind, api, v.Version, b)
		if err != nil {
			t.Fatalf("%s v%d %s: %v", v.Name, v.Version, v.Kind, err)
		}
		muts = append(muts, lie(f.SpanTree(), b)...)
		muts = append(muts, flip(b, 8)...)
		for _, m := range muts {
			if v.Kind == "request" {
				reqs = append(reqs, m)
			} else {
				resps = append(resps, respFrame{api.Key, v.Version, m})
			}
		}
	}
	for _, x := range corpusExchanges(c.Reg) {
		reqs = append(reqs, flip(x.Request.Bytes, 10)...)
		for _, m := range flip(x.Response.Bytes, 10) {
			resps = append(resps, respFrame{x.Response.Key, x.Response.Version, m})
		}
	}
	for _, b := range [][]byte{hostile.Example(1 << 12), hostile.DenseExample(1 << 12),
		hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(50), 50))} {
		reqs = append(reqs, b)
		reqs = append(reqs, flip(b, 20)...)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecodeRequest", "*"))
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// go test fuzz v1, then []byte("...")
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		lit := strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")")
		b, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reqs = append(reqs, []byte(b))
	}
	return reqs, resps
}

type respFrame struct {
	key, version int16
	b            []byte
}

func decodeVector(c *codec.Codec, kind string, api *schema.API, version int16, b []byte) (*codec.Frame, error) {
	if kind == "request" {
		return c.DecodeRequest(b, codec.Options{Spans: true})
	}
	return c.DecodeResponse(b, api, version, codec.Options{Spans: true})
}

// TestErrorPathIsRowPath decodes hostile frames with and without spans:
// each failing decode gives the same error both ways, set on one row of
// the partial tree, whose path is the error's path; the partial tree
// tiles the input.
func TestErrorPathIsRowPath(t *testing.T) {
	c, _ := fuzzSetup(t)
	c.DecompressLimit = compress.LimitDecompressor()
	reqs, resps := hostileFrames(t, c)
	failed := 0
	check := func(dec func(codec.Options) (*codec.Frame, error), in []byte) {
		f, errS := dec(codec.Options{Spans: true})
		_, errP := dec(codec.Options{})
		if fmt.Sprint(errS) != fmt.Sprint(errP) {
			t.Fatalf("spans and plain decoding disagree: %v vs %v\n%x", errS, errP, in)
		}
		if errS == nil {
			return
		}
		failed++
		tr := f.SpanTree()
		errorRow(t, tr, errS, "")
		if msg := tiles(tr, len(in)); msg != "" {
			t.Fatalf("partial tree does not tile (err %v): %s", errS, msg)
		}
	}
	for _, b := range reqs {
		check(func(o codec.Options) (*codec.Frame, error) { return c.DecodeRequest(b, o) }, b)
	}
	for _, r := range resps {
		api, _ := c.Reg.API(r.key)
		check(func(o codec.Options) (*codec.Frame, error) { return c.DecodeResponse(r.b, api, r.version, o) }, r.b)
	}
	if failed < 5000 {
		t.Fatalf("only %d of %d hostile frames failed to decode", failed, len(reqs)+len(resps))
	}
	t.Logf("%d of %d hostile frames failed; every error is on its row", failed, len(reqs)+len(resps))
}

// TestBodyErrorPathIsRowPath is TestErrorPathIsRowPath for bodies decoded
// alone: every cut of every smallest 4.3 body.
func TestBodyErrorPathIsRowPath(t *testing.T) {
	r := loadRelease(t, "4.3")
	n := 0
	for _, tr := range triples(r.reg) {
		m := tr.msg()
		b, err := sample.Encode(r.c, tr.api, tr.kind, tr.v)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		f, err := decodeVector(r.c, map[schema.MessageType]string{schema.TypeRequest: "request", schema.TypeResponse: "response"}[tr.kind], tr.api, tr.v, b)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		body := b[f.Size-bodyLen(f):]
		for cut := 0; cut < len(body); cut++ {
			_, tree, errS := r.c.DecodeBody(m, tr.v, body[:cut], codec.Options{Spans: true})
			_, _, errP := r.c.DecodeBody(m, tr.v, body[:cut], codec.Options{})
			if fmt.Sprint(errS) != fmt.Sprint(errP) {
				t.Fatalf("%s cut %d: spans and plain disagree: %v vs %v", tr, cut, errS, errP)
			}
			if errS == nil {
				continue
			}
			n++
			errorRow(t, tree, errS, m.Name)
		}
	}
	if n < 1000 {
		t.Fatalf("only %d cut bodies failed", n)
	}
}

// bodyLen is the size of the frame's body: the body row's length.
func bodyLen(f *codec.Frame) int {
	tr := f.SpanTree()
	kids := tr.Kids(tr.Root())
	return int(tr.N(kids[len(kids)-1]).Len)
}
