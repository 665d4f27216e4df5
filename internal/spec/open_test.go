package spec

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/manifester/manifester/internal/testshared"
)

// Kafka's files are read from ../shared, never copied into the repository;
// the jars and folders below are built from them in temporary directories.
var (
	sharedSpecs   = testshared.Join("kafka-spec", "4.3")
	sharedRecords = testshared.Join("kafka-records", "4.3")
)

// writeJar writes a zip at p with the *.json files of each source folder
// stored under the given entry folder, plus a manifest and a class file as
// real jars have.
func writeJar(t *testing.T, p string, dirs map[string]string) {
	t.Helper()
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	w, _ := zw.Create("META-INF/MANIFEST.MF")
	w.Write([]byte("Manifest-Version: 1.0\n"))
	w, _ = zw.Create("org/apache/kafka/Some.class")
	w.Write([]byte{0xca, 0xfe, 0xba, 0xbe})
	for entryDir, srcDir := range dirs {
		names, _ := filepath.Glob(filepath.Join(srcDir, "*.json"))
		if len(names) == 0 {
			t.Fatalf("no *.json in %s", srcDir)
		}
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
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// moduleEntryDir is where a module jar keeps its record schemas.
func moduleEntryDir(m string) string {
	switch m {
	case "metadata":
		return "common/metadata"
	case "storage":
		return "message"
	}
	return "common/message"
}

// writeLibs writes a libs/ folder: the clients jar, every module jar of
// version v and some unrelated jars.
func writeLibs(t *testing.T, dir, v string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJar(t, filepath.Join(dir, "kafka-clients-"+v+".jar"), map[string]string{"common/message": sharedSpecs})
	for _, m := range RecordModules {
		writeJar(t, filepath.Join(dir, "kafka-"+m+"-"+v+".jar"), map[string]string{moduleEntryDir(m): filepath.Join(sharedRecords, m)})
	}
	// Not spec sources: a test jar, an API jar, a Scala jar, another library.
	for _, n := range []string{"kafka-clients-" + v + "-test.jar", "kafka-group-coordinator-api-" + v + ".jar", "kafka_2.13-" + v + ".jar", "zstd-jni-1.5.6.jar"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("not read"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func countJSON(t *testing.T, dir string) int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no *.json in %s: %v", dir, err)
	}
	return len(names)
}

// checkFull checks a source with every module's record schemas.
func checkFull(t *testing.T, src *Source, label string) {
	t.Helper()
	if src.Label != label {
		t.Errorf("label = %q, want %q", src.Label, label)
	}
	files, err := src.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if n := countJSON(t, sharedSpecs); len(files) != n {
		t.Errorf("%d message files, want %d", len(files), n)
	}
	var mods []string
	for _, r := range src.Records {
		mods = append(mods, r.Module)
	}
	if strings.Join(mods, " ") != strings.Join(RecordModules, " ") {
		t.Errorf("record modules %v, want %v", mods, RecordModules)
	}
	recs, err := src.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, m := range RecordModules {
		want += countJSON(t, filepath.Join(sharedRecords, m))
	}
	if len(recs) != want {
		t.Errorf("%d record files, want %d", len(recs), want)
	}
	byName := map[string]*File{}
	for _, f := range recs {
		byName[f.Name] = f
	}
	if f := byName["metadata/TopicRecord.json"]; f == nil || f.Message.Type.S != "metadata" {
		t.Errorf("metadata/TopicRecord.json missing or not of type metadata")
	}
	if f := byName["group-coordinator/OffsetCommitKey.json"]; f == nil || f.Message.Type.S != "coordinator-key" {
		t.Errorf("group-coordinator/OffsetCommitKey.json missing or not a coordinator-key")
	}
}

func TestOpenDistribution(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "kafka_2.13-4.3.0")
	writeLibs(t, filepath.Join(dist, "libs"), "4.3.0")
	for _, p := range []string{dist, filepath.Join(dist, "libs")} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			checkFull(t, src, "4.3.0")
		})
	}
}

// TestOpenDistributionLabelFromFolder: a clients jar without a version in
// its name takes the release from the distribution folder's name.
func TestOpenDistributionLabelFromFolder(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "kafka_2.13-4.3.1")
	libs := filepath.Join(dist, "libs")
	os.MkdirAll(libs, 0o755)
	writeJar(t, filepath.Join(libs, "kafka-clients-4.3.1.jar"), map[string]string{"common/message": sharedSpecs})
	src, err := Open(dist)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Label != "4.3.1" || len(src.Records) != 0 {
		t.Errorf("label %q, %d record modules; want 4.3.1 and none", src.Label, len(src.Records))
	}
	if got := versionSuffix("kafka_2.13-4.3.0"); got != "4.3.0" {
		t.Errorf("versionSuffix = %q", got)
	}
}

func TestOpenSeveralJars(t *testing.T) {
	dir := t.TempDir()
	writeLibs(t, dir, "4.3.0")
	paths := []string{filepath.Join(dir, "kafka-clients-4.3.0.jar")}
	for _, m := range RecordModules {
		paths = append(paths, filepath.Join(dir, "kafka-"+m+"-4.3.0.jar"))
	}
	// Module jars first: the order does not matter.
	paths[0], paths[len(paths)-1] = paths[len(paths)-1], paths[0]
	src, err := Open(strings.Join(paths, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkFull(t, src, "4.3.0")

	// A module jar alone holds records and no messages.
	mod, err := Open(filepath.Join(dir, "kafka-metadata-4.3.0.jar"))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	if mod.Label != "4.3.0" || len(mod.Records) != 1 || mod.Records[0].Module != "metadata" {
		t.Errorf("module jar: label %q, records %+v", mod.Label, mod.Records)
	}
	if _, err := mod.ReadAll(); !errors.Is(err, ErrNoSpecs) || !strings.Contains(err.Error(), "record schemas only") {
		t.Errorf("module jar alone: ReadAll err = %v", err)
	}
}

// TestOpenSharedFolders: the message folder and the records folder of
// ../shared, comma-separated, are one source.
func TestOpenSharedFolders(t *testing.T) {
	src, err := Open(sharedSpecs + "," + sharedRecords)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkFull(t, src, "4.3")
	// The records folder alone.
	recs, err := Open(sharedRecords)
	if err != nil {
		t.Fatal(err)
	}
	if recs.FS != nil || len(recs.Records) != len(RecordModules) || recs.Label != "4.3" {
		t.Errorf("records folder: FS %v, %d modules, label %q", recs.FS, len(recs.Records), recs.Label)
	}
}

func TestOpenCheckout(t *testing.T) {
	root := t.TempDir()
	link := func(from, to string) {
		t.Helper()
		to = filepath.Join(root, filepath.FromSlash(to))
		os.MkdirAll(to, 0o755)
		names, _ := filepath.Glob(filepath.Join(from, "*.json"))
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(to, filepath.Base(n)), b, 0o644)
		}
	}
	link(sharedSpecs, "clients/src/main/resources/common/message")
	for _, m := range RecordModules {
		link(filepath.Join(sharedRecords, m), m+"/src/main/resources/"+moduleEntryDir(m))
	}
	os.WriteFile(filepath.Join(root, "gradle.properties"), []byte("group=org.apache.kafka\nversion=4.3.0-SNAPSHOT\n"), 0o644)
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkFull(t, src, "4.3.0-SNAPSHOT")
}

func TestOpenSourceErrors(t *testing.T) {
	dir := t.TempDir()
	writeLibs(t, dir, "4.3.0")
	other := t.TempDir()
	writeJar(t, filepath.Join(other, "kafka-metadata-4.2.0.jar"), map[string]string{"common/metadata": filepath.Join(sharedRecords, "metadata")})
	writeJar(t, filepath.Join(other, "kafka-clients-4.2.0.jar"), map[string]string{"common/message": sharedSpecs})
	writeJar(t, filepath.Join(other, "kafka-raft-4.3.0.jar"), map[string]string{"other": filepath.Join(sharedRecords, "raft")})
	clients := filepath.Join(dir, "kafka-clients-4.3.0.jar")
	for _, c := range []struct {
		name, path, want string
	}{
		{"different releases", clients + "," + filepath.Join(other, "kafka-metadata-4.2.0.jar"), "different releases"},
		{"two message sources", clients + "," + filepath.Join(other, "kafka-clients-4.2.0.jar"), "hold message specs"},
		{"module twice", clients + "," + filepath.Join(dir, "kafka-raft-4.3.0.jar") + "," + filepath.Join(dir, "kafka-raft-4.3.0.jar"), "module raft found twice"},
		{"module jar without schemas", filepath.Join(other, "kafka-raft-4.3.0.jar"), "no record schemas"},
		{"missing part", clients + "," + filepath.Join(dir, "missing.jar"), "missing.jar"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := Open(c.path)
			if err == nil {
				src.Close()
				t.Fatalf("opened %s", c.path)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
	// Two clients jars in one libs folder are ambiguous.
	writeJar(t, filepath.Join(dir, "kafka-clients-4.2.0.jar"), map[string]string{"common/message": sharedSpecs})
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "several kafka-clients jars") {
		t.Errorf("two clients jars: err = %v", err)
	}
}

func TestReadRecordsErrorsNameModule(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "metadata"), 0o755)
	os.WriteFile(filepath.Join(dir, "metadata", "BadRecord.json"), []byte(`{"name": `), 0o644)
	os.WriteFile(filepath.Join(dir, "metadata", "GoodRecord.json"), []byte(`{"name": "GoodRecord", "type": "metadata"}`), 0o644)
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := src.ReadRecords()
	var l ErrorList
	if !errors.As(err, &l) || len(l) != 1 || l[0].Pos.File != "metadata/BadRecord.json" {
		t.Errorf("err = %v, want one error naming metadata/BadRecord.json", err)
	}
	if len(files) != 1 || files[0].Name != "metadata/GoodRecord.json" {
		t.Errorf("files = %v", files)
	}
}

func TestParseJarName(t *testing.T) {
	for _, c := range []struct{ name, art, v string }{
		{"kafka-clients-4.3.0.jar", "clients", "4.3.0"},
		{"kafka-group-coordinator-4.3.0.jar", "group-coordinator", "4.3.0"},
		{"kafka-clients-4.5.0-SNAPSHOT.jar", "clients", "4.5.0-SNAPSHOT"},
		{"kafka-clients-4.3.0-test.jar", "", ""},
		{"kafka-clients-4.3.0-sources.jar", "", ""},
		{"kafka_2.13-4.3.0.jar", "", ""},
		{"kafka-streams-scala_2.13-4.3.0.jar", "", ""},
		{"kafka-clients.jar", "", ""},
	} {
		art, v, ok := ParseJarName(c.name)
		if art != c.art || v != c.v || ok != (c.art != "") {
			t.Errorf("%s: %q %q %v", c.name, art, v, ok)
		}
	}
	if !sameRelease("4.3", "4.3.0") || sameRelease("4.3", "4.3.1") || !sameRelease("trunk", "trunk") {
		t.Error("sameRelease")
	}
	rs := []Records{{Module: "zz"}, {Module: "metadata"}, {Module: "group-coordinator"}}
	sortRecords(rs)
	got := []string{rs[0].Module, rs[1].Module, rs[2].Module}
	if strings.Join(got, " ") != "group-coordinator metadata zz" {
		t.Errorf("sorted %v", got)
	}
}

// TestOpenJarBombBudget: a jar of entries that inflate to the per-file
// limit stops at the per-folder budget with an error naming the file,
// instead of inflating everything.
func TestOpenJarBombBudget(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bomb.zip")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	body := append([]byte(`{"name": "X", "type": "data"`), []byte(strings.Repeat(" ", maxSpecFile-40)+"}")...)
	n := maxFolderBytes/len(body) + 2
	for i := 0; i < n; i++ {
		w, err := zw.Create(fmt.Sprintf("A%04d.json", i))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	zw.Close()
	out.Close()
	if st, _ := os.Stat(p); st.Size() > 1<<20 {
		t.Fatalf("the bomb is %d bytes, not small", st.Size())
	}
	src, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	files, err := src.ReadAll()
	var l ErrorList
	if !errors.As(err, &l) || !strings.Contains(l[len(l)-1].Error(), "more than") {
		t.Fatalf("err = %v", err)
	}
	if want := fmt.Sprintf("A%04d.json", maxFolderBytes/len(body)); l[len(l)-1].Pos.File != want {
		t.Errorf("the budget error names %s, want %s", l[len(l)-1].Pos.File, want)
	}
	if len(files) > maxFolderBytes/len(body) {
		t.Errorf("%d files parsed", len(files))
	}
}

// FuzzOpenJar opens arbitrary bytes as a clients jar and as a module jar:
// an error or a source, never a panic.
func FuzzOpenJar(f *testing.F) {
	dir := f.TempDir()
	seed := func(entries map[string]string) {
		p := filepath.Join(dir, "seed.zip")
		out, _ := os.Create(p)
		zw := zip.NewWriter(out)
		for n, body := range entries {
			w, _ := zw.Create(n)
			w.Write([]byte(body))
		}
		zw.Close()
		out.Close()
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	seed(map[string]string{"common/message/RequestHeader.json": `{"name": "RequestHeader", "type": "header", "validVersions": "0-2", "flexibleVersions": "2+", "fields": []}`})
	seed(map[string]string{"common/metadata/ThingRecord.json": `{"name": "ThingRecord", "type": "metadata", "apiKey": 0, "validVersions": "0", "flexibleVersions": "0+", "fields": []}`})
	f.Add([]byte("PK\x03\x04 not really"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := t.TempDir()
		for _, name := range []string{"kafka-clients-1.0.0.jar", "kafka-metadata-1.0.0.jar"} {
			p := filepath.Join(d, name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := Open(p)
			if err != nil {
				continue
			}
			src.ReadAll()
			src.ReadRecords()
			src.Close()
		}
	})
}

// TestReadDirKeepsNameOrder reads a folder of good and bad files and
// checks that the files and the errors come back in
// name order, the bad ones each named once.
func TestReadDirKeepsNameOrder(t *testing.T) {
	fsys := fstest.MapFS{}
	var wantFiles, wantErrs []string
	for i := range 60 {
		name := fmt.Sprintf("M%02dRequest.json", i)
		if i%3 == 1 {
			fsys[name] = &fstest.MapFile{Data: []byte(`{"name": `)}
			wantErrs = append(wantErrs, name)
			continue
		}
		fsys[name] = &fstest.MapFile{Data: []byte(fmt.Sprintf(`{"apiKey": %d, "type": "request", "name": "M%02dRequest", "validVersions": "0", "flexibleVersions": "none", "fields": []}`, i, i))}
		wantFiles = append(wantFiles, name)
	}
	files, err := readDir(fsys, "", "test")
	var l ErrorList
	if !errors.As(err, &l) {
		t.Fatalf("err = %v, want an ErrorList", err)
	}
	var gotErrs, gotFiles []string
	for _, e := range l {
		gotErrs = append(gotErrs, e.Pos.File)
	}
	for _, f := range files {
		gotFiles = append(gotFiles, f.Name)
	}
	if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) {
		t.Errorf("errors name %v, want %v", gotErrs, wantErrs)
	}
	if fmt.Sprint(gotFiles) != fmt.Sprint(wantFiles) {
		t.Errorf("files %v, want %v", gotFiles, wantFiles)
	}
}

// TestOpenJarDuplicateEntries: a jar holding two entries of one name (or
// a file and a folder of one name) cannot be listed as a folder. The
// error said "no *.json spec files found"; it names the entry and the
// jar.
func TestOpenJarDuplicateEntries(t *testing.T) {
	for _, dup := range []string{"common/message/ThingData.json", "common/message/ThingData.json/"} {
		p := filepath.Join(t.TempDir(), "kafka-clients-1.0.0.jar")
		out, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(out)
		for _, name := range []string{"common/message/ThingData.json", dup} {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(name, "/") {
				w.Write([]byte(`{"name": "ThingData", "type": "data", "validVersions": "0", "flexibleVersions": "none", "fields": []}`))
			}
		}
		zw.Close()
		out.Close()
		src, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.ReadAll()
		src.Close()
		if err == nil || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), "ThingData.json: duplicate entries") {
			t.Errorf("entry %q: err = %v", dup, err)
		}
	}
}

// TestLabelPrintable: a release label read from a PROVENANCE file or a
// checkout's gradle.properties is printed by build, serve, diff and
// proxy; one holding control characters ("9.9\x1b[2J" cleared the
// screen) is quoted, as file names in errors are.
func TestLabelPrintable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "PROVENANCE"), []byte("kafka 9.9\x1b[2J\x1b]0;pwned\x07 from x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ThingData.json"), []byte(`{"name": "ThingData", "type": "data"}`), 0o644)
	checkout := t.TempDir()
	os.MkdirAll(filepath.Join(checkout, filepath.FromSlash(checkoutDir)), 0o755)
	os.WriteFile(filepath.Join(checkout, "gradle.properties"), []byte("version=4.5.0\u202e-SNAPSHOT\n"), 0o644)
	for p, want := range map[string]string{dir: `"9.9\x1b[2J\x1b]0;pwned\a"`, checkout: `"4.5.0\u202e-SNAPSHOT"`} {
		src, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		src.Close()
		if src.Label != want {
			t.Errorf("label %q, want %s", src.Label, want)
		}
	}
	// Printable labels are kept as they are.
	os.WriteFile(filepath.Join(dir, "PROVENANCE"), []byte("kafka 4.3.0-é from x\n"), 0o644)
	if src, err := Open(dir); err != nil || src.Label != "4.3.0-é" {
		t.Errorf("label %q, err %v", src.Label, err)
	}
}

// TestOpenTarball: the Kafka download from kafka.apache.org is a .tgz,
// which a new user gives --spec as it is; the error says to unpack it and
// which folder or jar to give, not only that it is no zip.
func TestOpenTarball(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kafka_2.13-4.3.0.tgz")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(make([]byte, 1024)) // a tar's blocks, as far as this test goes
	zw.Close()
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p)
	if err == nil || !strings.Contains(err.Error(), "gzip-compressed") || !strings.Contains(err.Error(), "tar -xzf") {
		t.Errorf("%v; want a hint to unpack it", err)
	}
}

// TestOpenParentOfReleases: a folder of release folders (../shared/kafka-spec
// itself, one folder a release) is no spec folder; the error names the
// folders in it that are, so that the user can pick one.
func TestOpenParentOfReleases(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"4.2", "4.3"} {
		if err := os.Symlink(filepath.Join(filepath.Dir(sharedSpecs), rel), filepath.Join(root, rel)); err != nil {
			t.Skip(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := Open(root)
	if err == nil {
		_, err = src.ReadAll()
		src.Close()
	}
	want := "give one of the folders in it that hold them: " + filepath.Join(root, "4.2") + ", " + filepath.Join(root, "4.3")
	if !errors.Is(err, ErrNoSpecs) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("%v\nwant %q", err, want)
	}
}

// TestOpenJarOversizeBombBudget: entries that inflate past the per-file
// limit count against the per-folder budget too. They did not, so a jar
// of 10,000 such entries (each a few KB) made the reader inflate 40 GB,
// 4 MiB an entry, and report 10,000 errors.
func TestOpenJarOversizeBombBudget(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bomb.zip")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	body := bytes.Repeat([]byte(" "), maxSpecFile+1)
	n := 2 * maxFolderBytes / len(body)
	for i := 0; i < n; i++ {
		w, err := zw.Create(fmt.Sprintf("A%04d.json", i))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	zw.Close()
	out.Close()
	src, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.ReadAll()
	var l ErrorList
	if !errors.As(err, &l) {
		t.Fatalf("err = %v", err)
	}
	if max := maxFolderBytes/maxSpecFile + 1; len(l) > max {
		t.Errorf("%d errors for %d entries, want at most %d (the budget reached)", len(l), n, max)
	}
	if last := l[len(l)-1].Error(); !strings.Contains(last, "not reading further") {
		t.Errorf("last error %q, want the budget's", last)
	}
	if !strings.Contains(l[0].Error(), "A0000.json: file larger than") {
		t.Errorf("first error %q", l[0])
	}
}

// TestOpenSeveralJarsCommaInFolder: jars joined by commas open when a
// folder of their path holds a comma itself, as specfind joins the jars
// of a Maven cache under a home folder such as /home/a,b. The path was cut
// at every comma: "stat .../home: no such file or directory".
func TestOpenSeveralJarsCommaInFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home,of, someone")
	writeLibs(t, dir, "4.3.0")
	paths := []string{filepath.Join(dir, "kafka-clients-4.3.0.jar")}
	for _, m := range RecordModules {
		paths = append(paths, filepath.Join(dir, "kafka-"+m+"-4.3.0.jar"))
	}
	src, err := Open(strings.Join(paths, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkFull(t, src, "4.3.0")
	// Blank entries and spaces around the paths are dropped, as before.
	src2, err := Open(" " + strings.Join(paths, " , ") + ",,")
	if err != nil {
		t.Fatal(err)
	}
	defer src2.Close()
	checkFull(t, src2, "4.3.0")
}
