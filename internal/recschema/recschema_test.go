package recschema

import (
	"testing"
)

const recordsRoot = "../../../shared/kafka-records"

// TestLoadReleases loads every module of the 4.3 and trunk record schemas:
// each coordinator-key has its value of the same apiKey, and the internal
// topics map to their modules.
func TestLoadReleases(t *testing.T) {
	for _, rel := range []string{"4.3", "trunk"} {
		s, err := Load(recordsRoot + "/" + rel)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		var names []string
		for _, m := range s.Modules {
			names = append(names, m.Name)
			for k, key := range m.keys {
				if _, ok := m.vals[k]; !ok {
					t.Errorf("%s %s: key %s (type %d) has no value", rel, m.Name, key.Name, k)
				}
			}
		}
		if len(s.Modules) != 7 {
			t.Errorf("%s: modules %v, want 7", rel, names)
		}
		for _, topic := range Topics() {
			k, m := s.ForTopic(topic)
			if k == KindNone || m == nil || m.Topic != topic {
				t.Errorf("%s: topic %s has no module", rel, topic)
			}
		}
		_, g := s.ForTopic("__consumer_offsets")
		if k, ok := g.Key(1); !ok || k.Name != "OffsetCommitKey" {
			t.Errorf("%s: record type 1 of __consumer_offsets is %v", rel, k)
		}
		if v, ok := g.Value(2); !ok || v.Name != "GroupMetadataValue" {
			t.Errorf("%s: value type 2 is %v", rel, v)
		}
		_, md := s.ForTopic("__cluster_metadata")
		if r, ok := md.Metadata(2); !ok || r.Name != "TopicRecord" {
			t.Errorf("%s: metadata api key 2 is %v", rel, r)
		}
		if r, ok := s.Lookup("topicrecord"); !ok || r.Module.Name != "metadata" || r.Slug() != "metadata/TopicRecord" {
			t.Errorf("%s: lookup TopicRecord: %v", rel, r)
		}
	}
}
