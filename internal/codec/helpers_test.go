package codec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

// specRoot is where tests read Kafka's spec files; they are never copied
// into the repository.
var specRoot = testshared.SpecPath("")

// release is one loaded spec release with its codec.
type release struct {
	label string
	reg   *schema.Registry
	c     *codec.Codec
}

var (
	releaseMu    sync.Mutex
	releaseCache = map[string]*release{}
)

// loadRelease loads (once per test binary) the specs of one release.
func loadRelease(t testing.TB, label string) *release {
	t.Helper()
	testshared.Dir(t)
	releaseMu.Lock()
	defer releaseMu.Unlock()
	if r, ok := releaseCache[label]; ok {
		return r
	}
	reg, err := schema.Load(filepath.Join(specRoot, label))
	if err != nil {
		t.Fatalf("loading release %s: %v", label, err)
	}
	r := &release{label: label, reg: reg, c: codec.New(reg)}
	releaseCache[label] = r
	return r
}

// everyRelease are the releases every all-releases test must cover; trunk
// (4.5.0-SNAPSHOT) has APIs and versions no release has.
var everyRelease = []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"}

// releaseLabels lists the release directories under specRoot.
func releaseLabels(t testing.TB) []string {
	t.Helper()
	testshared.Dir(t)
	entries, err := os.ReadDir(specRoot)
	if err != nil {
		t.Fatalf("reading %s: %v", specRoot, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	for _, want := range everyRelease {
		if !slices.Contains(out, want) {
			t.Fatalf("found releases %v under %s, want at least %v", out, specRoot, everyRelease)
		}
	}
	return out
}

// triple is one (api, version, kind) of a registry.
type triple struct {
	api  *schema.API
	v    int16
	kind schema.MessageType
}

func (tr triple) msg() *schema.Message {
	if tr.kind == schema.TypeResponse {
		return tr.api.Response
	}
	return tr.api.Request
}

func (tr triple) String() string {
	return fmt.Sprintf("%s(%d) v%d %s", tr.api.Name, tr.api.Key, tr.v, tr.kind)
}

// triples lists every (api, version, kind) of reg with a valid version,
// request before response.
func triples(reg *schema.Registry) []triple {
	var out []triple
	for _, api := range reg.APIs {
		if api.Reserved() {
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			out = append(out, triple{api, v, schema.TypeRequest})
			if api.Response.Valid.Contains(v) {
				out = append(out, triple{api, v, schema.TypeResponse})
			}
		}
	}
	return out
}

// row is one row of a span.Tree, for tests that walk down a tree by child
// index and check names, types and values on the way.
type row struct {
	t  *span.Tree
	id span.ID
}

// Kids returns the row's children in order.
func (r row) Kids() []row {
	var out []row
	for _, k := range r.t.Kids(r.id) {
		out = append(out, row{r.t, k})
	}
	return out
}

func (r row) Name() string       { return r.t.Name(r.id) }
func (r row) Type() string       { return r.t.Type(r.id) }
func (r row) ValueText() string  { return r.t.ValueText(r.id) }
func (r row) Path() string       { return r.t.Path(r.id) }
func (r row) Null() bool         { return r.t.N(r.id).Null }
func (r row) Off() int           { return int(r.t.N(r.id).Off) }
func (r row) Len() int           { return int(r.t.N(r.id).Len) }
func (r row) Int() int64         { return r.t.N(r.id).Int }
func (r row) Cat() span.Category { return r.t.N(r.id).Cat }
func (r row) Note() string       { return r.t.Note(r.id) }
func (r row) Err() error         { return r.t.Err(r.id) }
func (r row) Bytes() []byte      { return r.t.ValueBytes(r.id) }
func (r row) Flag() string       { return r.t.Flag(r.id) }

// String shows the row's path and value, for test messages.
func (r row) String() string { return r.Path() + r.ValueText() }

// corpusExchanges are bench/corpus's exchanges of every API of reg that
// is not reserved, at the versions its requests have.
func corpusExchanges(reg *schema.Registry) []corpus.Exchange {
	return corpus.Exchanges(func(key int16) (int16, int16, bool) {
		api, ok := reg.API(key)
		if !ok || api.Reserved() {
			return 0, 0, false
		}
		return api.Request.Valid.Lo, api.Request.Valid.Hi, true
	})
}
