package diff

import (
	"reflect"
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// TestDifferSharesAcrossPairs diffs every pair of versions of every API
// of a release through one Differ per API, from several goroutines at
// once, and checks each result against facts worked out without it: the
// sizes from encoding the smallest frames, the comments from the file,
// and the rest against a Differ that has seen no other pair. A memo
// filed under the wrong version or message, or shared unsafely, fails.
func TestDifferSharesAcrossPairs(t *testing.T) {
	c := load(t, "4.3")
	for _, api := range c.Reg.APIs {
		valid := api.Request.Valid
		if api.Reserved() || valid.Empty() {
			continue
		}
		shared := NewDiffer(c, api)
		type pair struct{ a, b int16 }
		var pairs []pair
		for a := valid.Lo; a <= valid.Hi; a++ {
			for b := valid.Lo; b <= valid.Hi; b++ {
				if a != b {
					pairs = append(pairs, pair{a, b})
				}
			}
		}
		got := make([]*VersionDiff, len(pairs))
		errs := make([]error, len(pairs))
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(pairs); i += 4 {
					got[i], errs[i] = shared.Versions(pairs[i].a, pairs[i].b)
				}
			}()
		}
		wg.Wait()
		for i, p := range pairs {
			if errs[i] != nil {
				t.Fatalf("%s v%d..v%d: %v", api.Name, p.a, p.b, errs[i])
			}
			fresh, err := NewDiffer(c, api).Versions(p.a, p.b)
			if err != nil {
				t.Fatalf("%s v%d..v%d, fresh: %v", api.Name, p.a, p.b, err)
			}
			if !reflect.DeepEqual(got[i], fresh) {
				t.Fatalf("%s v%d..v%d: shared Differ gives\n%+v\nfresh one\n%+v", api.Name, p.a, p.b, got[i], fresh)
			}
			for _, m := range []struct {
				kind schema.MessageType
				msg  *schema.Message
				md   MessageDiff
			}{{schema.TypeRequest, api.Request, got[i].Request}, {schema.TypeResponse, api.Response, got[i].Response}} {
				for _, s := range []struct {
					v    int16
					size int
				}{{p.a, m.md.Size.From}, {p.b, m.md.Size.To}} {
					frame, err := sample.Encode(c, api, m.kind, s.v)
					if err != nil {
						t.Fatal(err)
					}
					if s.size != len(frame) {
						t.Fatalf("%s v%d..v%d: %s size at v%d = %d, the smallest frame has %d bytes",
							api.Name, p.a, p.b, m.msg.Name, s.v, s.size, len(frame))
					}
				}
				want := commentsBetween(VersionComments(m.msg.Source), p.a, p.b)
				if len(want) == 0 {
					want = []Comment{}
				}
				if !reflect.DeepEqual(m.md.Comments, want) {
					t.Fatalf("%s v%d..v%d: %s comments %v, the file's are %v", api.Name, p.a, p.b, m.msg.Name, m.md.Comments, want)
				}
			}
		}
	}
}
