package diff

import (
	"bytes"
	"cmp"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// filled returns a body of s at version v in which every field present
// holds a value of its own (numbers and strings from *n, counting up),
// every array one element and every nullable field a value, so that a
// field read under another name shows whose value it got.
func filled(s *schema.Struct, v int16, n *int64, depth int) codec.Value {
	out := codec.KidsValue(make([]codec.Value, len(s.Fields)))
	for i, f := range s.Fields {
		if !f.Versions.Contains(v) || depth > maxDepth {
			out.Kids()[i] = codec.DefaultValue(f)
			continue
		}
		out.Kids()[i] = filledValue(f.Type, v, n, depth)
	}
	return out
}

func filledValue(t *schema.Type, v int16, n *int64, depth int) codec.Value {
	*n++
	switch t.Kind {
	case schema.KindBool:
		return codec.IntValue(1)
	case schema.KindUUID:
		b := make([]byte, 16)
		b[15] = byte(*n)
		return codec.BytesValue(b)
	case schema.KindString, schema.KindBytes:
		return codec.BytesValue([]byte("v" + strconv.FormatInt(*n, 10)))
	case schema.KindRecords:
		return codec.BytesValue(nil)
	case schema.KindFloat64:
		return codec.FloatValue(float64(*n))
	case schema.KindArray:
		return codec.KidsValue([]codec.Value{filledValue(t.Elem, v, n, depth)})
	case schema.KindStruct:
		return filled(t.Struct, v, n, depth+1)
	}
	return codec.IntValue(*n % 100)
}

// at returns the value of field name in the struct at path (dotted field
// names from the body, through the first element of each array).
func at(t *testing.T, val codec.Value, s *schema.Struct, path, name string) codec.Value {
	t.Helper()
	var steps []string
	if path != "" {
		steps = strings.Split(path, ".")
	}
	for _, step := range append(steps, name) {
		var f *schema.Field
		for _, g := range s.Fields {
			if g.Name == step {
				f = g
			}
		}
		if f == nil {
			t.Fatalf("%s has no field %s", s.Name, step)
		}
		val = val.Kids()[f.Index]
		if f.Type.Kind == schema.KindArray {
			val = val.Kids()[0]
		}
		if st := f.Type.ElemStruct(); st != nil {
			s = st
		}
	}
	return val
}

// join is path.name, or name for the body's fields.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// TestReleaseRenamesKeepBytes: every rename the release diffs report is
// the field under a new name. A body of the older release's schema, each
// field holding a value of its own, encodes to bytes that the newer
// release's schema decodes cleanly and re-encodes byte for byte, and the
// renamed field holds there the value its old name held.
func TestReleaseRenamesKeepBytes(t *testing.T) {
	releases := []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"}
	found := 0
	for i := 1; i < len(releases); i++ {
		ca, cb := load(t, releases[i-1]), load(t, releases[i])
		for _, ch := range Releases(ca.Reg, cb.Reg).Changed {
			apiA, _ := ca.Reg.API(ch.Key)
			apiB, _ := cb.Reg.API(ch.Key)
			for _, r := range ch.Redefined {
				for _, side := range []struct {
					sds    []StructDiff
					ma, mb *schema.Message
				}{{r.Request, apiA.Request, apiB.Request}, {r.Response, apiA.Response, apiB.Response}} {
					type rename struct{ path, from, to string }
					var rs []rename
					for _, sd := range side.sds {
						for _, fc := range sd.Changed {
							if fc.Changes[0].Property == "name" {
								rs = append(rs, rename{sd.Path, fc.Changes[0].From, fc.Changes[0].To})
							}
						}
					}
					if len(rs) == 0 {
						continue
					}
					found += len(rs)
					what := releases[i-1] + " -> " + releases[i] + " " + side.mb.Name + " v" + strconv.Itoa(int(r.Version))
					var n int64
					va := filled(side.ma.Body, r.Version, &n, 0)
					wire, err := ca.EncodeBody(nil, side.ma, r.Version, &va)
					if err != nil {
						t.Fatalf("%s: encoding: %v", what, err)
					}
					vb, _, err := cb.DecodeBody(side.mb, r.Version, wire, codec.Options{})
					if err != nil {
						t.Fatalf("%s: the newer schema does not read the older's bytes: %v", what, err)
					}
					again, err := cb.EncodeBody(nil, side.mb, r.Version, &vb)
					if err != nil || !bytes.Equal(again, wire) {
						t.Errorf("%s: re-encoded by the newer schema: %x, %v; want %x", what, again, err, wire)
					}
					// The older schema's path to a field: the renamed
					// structs on the way under their old names.
					oldName := map[string]string{}
					for _, rn := range rs {
						oldName[join(rn.path, rn.to)] = rn.from
					}
					oldPath := func(path string) string {
						var steps, now []string
						for step := range strings.SplitSeq(path, ".") {
							if step == "" {
								continue
							}
							now = append(now, step)
							steps = append(steps, cmp.Or(oldName[strings.Join(now, ".")], step))
						}
						return strings.Join(steps, ".")
					}
					for _, rn := range rs {
						old, now := at(t, va, side.ma.Body, oldPath(rn.path), rn.from), at(t, vb, side.mb.Body, rn.path, rn.to)
						if old.Int() != now.Int() || !bytes.Equal(old.Bytes(), now.Bytes()) {
							t.Errorf("%s: %s holds %d %q, %s held %d %q", what, rn.to, now.Int(), now.Bytes(), rn.from, old.Int(), old.Bytes())
						}
					}
				}
			}
		}
	}
	// Vote's CandidateId and CandidateEpoch (and, from v1,
	// CandidateDirectoryId) in 4.0; ListConfigResources v0's
	// ClientMetricsResources and their Name in 4.1; TxnOffsetCommit's
	// GenerationId at three versions and StreamsGroupHeartbeat's
	// AcceptableRecoveryLag in trunk.
	if found < 11 {
		t.Errorf("%d renames found, want at least 11", found)
	}
}
