package recschema

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/testshared"
)

var recordsRoot = testshared.Join("kafka-records")

// TestLoadReleases loads every module of the 4.3 and trunk record schemas:
// each coordinator-key has its value of the same apiKey, and the internal
// topics map to their modules.
func TestLoadReleases(t *testing.T) {
	testshared.Dir(t)
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

// TestLoadLayouts: one module folder, a source checkout's module layout,
// and errors: no schemas, a bad schema named by file:line:col.
func TestLoadLayouts(t *testing.T) {
	testshared.Dir(t)
	s, err := Load(recordsRoot + "/4.3/metadata")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Modules) != 1 || s.Modules[0].Name != "metadata" || s.Modules[0].Topic != "__cluster_metadata" {
		t.Errorf("module folder: %+v", s.Modules)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "transaction-coordinator", "src", "main", "resources", "common", "message")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"TransactionLogKey.json", "TransactionLogValue.json"} {
		b, err := os.ReadFile(filepath.Join(recordsRoot, "4.3", "transaction-coordinator", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err = Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if k, m := s.ForTopic("__transaction_state"); k != KindCoordinator || m == nil || len(m.Reg.Messages) != 2 {
		t.Errorf("checkout layout: %v %v", k, m)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNoRecords) {
		t.Errorf("empty folder: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "group-coordinator")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "XKey.json"), []byte(`{"type": "coordinator-key", "name": "XKey", "apiKey": 1,
  "validVersions": "0-1", "flexibleVersions": "none", "fields": []}`), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "XKey.json:2:20") || !strings.Contains(err.Error(), "module group-coordinator") {
		t.Errorf("bad schema: %v", err)
	}
}

// TestLoadJars: module jars built here from ../shared (entries under
// common/message and common/metadata, as Kafka's jars hold them), alone and
// in a distribution's libs/ beside other jars.
func TestLoadJars(t *testing.T) {
	testshared.Dir(t)
	dist := t.TempDir()
	libs := filepath.Join(dist, "libs")
	os.MkdirAll(libs, 0o755)
	writeJar := func(name, module, dir string) string {
		p := filepath.Join(libs, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		w, _ := zw.Create("META-INF/MANIFEST.MF")
		w.Write([]byte("Manifest-Version: 1.0\n"))
		names, _ := filepath.Glob(filepath.Join(recordsRoot, "4.3", module, "*.json"))
		for _, n := range names {
			b, _ := os.ReadFile(n)
			w, _ := zw.Create(dir + "/" + filepath.Base(n))
			w.Write(b)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	gc := writeJar("kafka-group-coordinator-4.3.0.jar", "group-coordinator", "common/message")
	writeJar("kafka-metadata-4.3.0.jar", "metadata", "common/metadata")
	writeJar("kafka-clients-4.3.0.jar", "streams", "common/message") // not a module jar: ignored
	s, err := Load(gc)
	if err != nil {
		t.Fatal(err)
	}
	if _, m := s.ForTopic("__consumer_offsets"); m == nil || len(m.Reg.Messages) != 44 {
		t.Errorf("one jar: %v", m)
	}
	for _, p := range []string{dist, libs} {
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range s.Modules {
			names = append(names, m.Name)
		}
		if strings.Join(names, " ") != "group-coordinator metadata" {
			t.Errorf("%s: modules %v", p, names)
		}
	}
	if _, err := Load(filepath.Join(libs, "kafka-clients-4.3.0.jar")); err == nil || !strings.Contains(err.Error(), "not a Kafka module jar") {
		t.Errorf("clients jar: %v", err)
	}
}
