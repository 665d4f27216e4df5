package codec_test

import (
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/span"
)

// TestConcurrentDecodes decodes every smallest 4.3 frame from several
// goroutines at once through one codec (whose decoders come from a
// pool), each into its own reused tree, with and without values: every
// result equals the one decoded alone.
func TestConcurrentDecodes(t *testing.T) {
	r := loadRelease(t, "4.3")
	type job struct {
		tr    triple
		b     []byte
		tree  *span.Tree
		value codec.Value
	}
	var jobs []job
	for _, tr := range triples(r.reg) {
		b, err := sample.Encode(r.c, tr.api, tr.kind, tr.v)
		if err != nil {
			t.Fatal(err)
		}
		f, err := decodeFrame(r.c, tr, b, codec.Options{Spans: true})
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		jobs = append(jobs, job{tr, b, f.SpanTree(), f.Body})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			tree := &span.Tree{}
			for i := range jobs {
				j := &jobs[(i+g*37)%len(jobs)]
				opts := codec.Options{Spans: true, Tree: tree, NoValues: (i+g)%2 == 0}
				f, err := decodeFrame(r.c, j.tr, j.b, opts)
				if err != nil {
					errs <- j.tr.String() + ": " + err.Error()
					return
				}
				if p := sameTree(j.tree, tree); p != "" {
					errs <- j.tr.String() + ": tree differs at " + p
					return
				}
				if !opts.NoValues && !codec.Equal(&f.Body, &j.value) {
					errs <- j.tr.String() + ": value differs"
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
