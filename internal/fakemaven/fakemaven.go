// Package fakemaven builds, for tests, the jars a Kafka release publishes
// (kafka-clients and the module jars with record schemas) from the spec
// folders in ../shared, and lays them out as a Maven repository with
// checksum files. The jars are written to temporary folders only: Kafka's
// files are read, never copied into the repository.
package fakemaven

import (
	"archive/zip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Modules maps each module artifact to the folder its jar keeps the record
// schemas in.
var Modules = map[string]string{
	"kafka-group-coordinator":       "common/message",
	"kafka-share-coordinator":       "common/message",
	"kafka-transaction-coordinator": "common/message",
	"kafka-metadata":                "common/metadata",
	"kafka-raft":                    "common/message",
	"kafka-streams":                 "common/message",
	"kafka-storage":                 "message",
}

// WriteJar writes a jar at p holding the *.json files of srcDir under
// entryDir, beside a manifest and a class file as real jars have.
func WriteJar(t testing.TB, p, entryDir, srcDir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(srcDir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("fakemaven: no *.json in %s (%v)", srcDir, err)
	}
	sort.Strings(names)
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	w, _ := zw.Create("META-INF/MANIFEST.MF")
	w.Write([]byte("Manifest-Version: 1.0\n"))
	w, _ = zw.Create("org/apache/kafka/Generated.class")
	w.Write([]byte{0xca, 0xfe, 0xba, 0xbe})
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(entryDir + "/" + filepath.Base(n))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Repo lays out release version under the Maven repository folder dir:
// org/apache/kafka/ARTIFACT/VERSION/ARTIFACT-VERSION.jar with .sha1,
// .sha256 and .sha512 files, for kafka-clients (from specDir) and each
// module of Modules that recordsDir has a folder for. It returns the jar
// paths by artifact.
func Repo(t testing.TB, dir, version, specDir, recordsDir string) map[string]string {
	t.Helper()
	jars := map[string]string{}
	add := func(art, entryDir, src string) {
		p := filepath.Join(dir, "org", "apache", "kafka", art, version, art+"-"+version+".jar")
		WriteJar(t, p, entryDir, src)
		WriteChecksums(t, p)
		jars[art] = p
	}
	add("kafka-clients", "common/message", specDir)
	if recordsDir != "" {
		for art, entryDir := range Modules {
			src := filepath.Join(recordsDir, art[len("kafka-"):])
			if _, err := os.Stat(src); err == nil {
				add(art, entryDir, src)
			}
		}
	}
	return jars
}

// WriteChecksums writes p.sha1, p.sha256 and p.sha512 as Maven repositories
// publish them: the hex digest alone.
func WriteChecksums(t testing.TB, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s1, s256, s512 := sha1.Sum(b), sha256.Sum256(b), sha512.Sum512(b)
	for ext, sum := range map[string][]byte{".sha1": s1[:], ".sha256": s256[:], ".sha512": s512[:]} {
		if err := os.WriteFile(p+ext, []byte(hex.EncodeToString(sum)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteMetadata writes the maven-metadata.xml of kafka-clients under the
// repository folder dir, naming release as the latest release.
func WriteMetadata(t testing.TB, dir, release string) {
	t.Helper()
	p := filepath.Join(dir, "org", "apache", "kafka", "kafka-clients", "maven-metadata.xml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	xml := `<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>org.apache.kafka</groupId>
  <artifactId>kafka-clients</artifactId>
  <versioning>
    <latest>` + release + `</latest>
    <release>` + release + `</release>
    <versions><version>` + release + `</version></versions>
  </versioning>
</metadata>
`
	if err := os.WriteFile(p, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
}
