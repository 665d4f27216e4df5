package recschema

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// FuzzFromFS builds a module from two fuzzed record schemas. Properties:
// no panic; an error names the module, and each spec problem in it a
// fuzzed file; a module built answers Key, Value and Metadata exactly for
// the schemas of those types, by their apiKey (the record type or api key
// a record's bytes carry), and for no other key.
func FuzzFromFS(f *testing.F) {
	f.Add([]byte(`{"type": "coordinator-key", "name": "AKey", "apiKey": 3, "validVersions": "0", "flexibleVersions": "none", "fields": [{"name": "G", "type": "string", "versions": "0"}]}`),
		[]byte(`{"type": "coordinator-value", "name": "AValue", "apiKey": 3, "validVersions": "0-1", "flexibleVersions": "1+", "fields": [{"name": "N", "type": "int32", "versions": "0+"}]}`))
	f.Add([]byte(`{"type": "metadata", "name": "ThingRecord", "apiKey": 32767, "validVersions": "0", "flexibleVersions": "0+", "fields": []}`),
		[]byte(`{"type": "data", "name": "Other", "validVersions": "0", "flexibleVersions": "none", "fields": []}`))
	f.Add([]byte(`{"type": "coordinator-key", "name": "AKey", "apiKey": -1, "validVersions": "0", "flexibleVersions": "none", "fields": []}`),
		[]byte(`{"type": "coordinator-key", "name": "BKey", "apiKey": 3, "validVersions": "0-1", "flexibleVersions": "none", "fields": []}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		fsys := fstest.MapFS{"A.json": {Data: a}, "B.json": {Data: b}}
		s, err := FromFS(nil, "group-coordinator", fsys)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "records: module group-coordinator") {
				t.Fatalf("error does not name the module: %v", err)
			}
			var l spec.ErrorList
			if errors.As(err, &l) {
				for _, e := range l {
					if e.Pos.File != "A.json" && e.Pos.File != "B.json" {
						t.Fatalf("error names no fuzzed file: %v", e)
					}
				}
			}
			return
		}
		m, ok := s.Module("group-coordinator")
		if !ok {
			t.Fatal("module not found")
		}
		want := map[schema.MessageType]map[int16]string{}
		for _, msg := range m.Reg.Messages {
			if msg.APIKey < 0 {
				continue
			}
			if want[msg.Type] == nil {
				want[msg.Type] = map[int16]string{}
			}
			want[msg.Type][msg.APIKey] = msg.Name
		}
		for k := int16(-1); k < 5; k++ {
			check := func(typ schema.MessageType, got *schema.Message, ok bool) {
				name, exp := want[typ][k]
				if ok != exp || ok && got.Name != name {
					t.Fatalf("%s %d: got %v %v, want %q %v", typ, k, got, ok, name, exp)
				}
			}
			v, ok := m.Key(k)
			check(schema.TypeCoordinatorKey, v, ok)
			v, ok = m.Value(k)
			check(schema.TypeCoordinatorValue, v, ok)
			v, ok = m.Metadata(k)
			check(schema.TypeMetadata, v, ok)
		}
	})
}
