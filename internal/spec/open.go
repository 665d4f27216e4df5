package spec

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// checkoutDir is where a Kafka source checkout keeps the message specs.
const checkoutDir = "clients/src/main/resources/common/message"

// jarDir is where kafka-clients jars keep them.
const jarDir = "common/message"

// maxSpecFile bounds the size of one spec file; the largest real one is
// about 20 KiB.
const maxSpecFile = 4 << 20

// maxSpecFiles bounds the number of *.json files read from one folder or
// jar; a Kafka release has about 200.
const maxSpecFiles = 10000

// maxFolderBytes bounds the bytes read from one folder or jar, so that a
// crafted jar of many highly compressed entries cannot make the reader
// inflate far more than a release holds (about 1.5 MiB).
const maxFolderBytes = 64 << 20

// RecordModules are the Kafka modules whose jars (kafka-MODULE-VERSION.jar)
// and source folders carry record schemas: the versioned keys and values of
// the internal topics, KRaft's metadata records and a few data files.
var RecordModules = []string{
	"group-coordinator", "share-coordinator", "transaction-coordinator",
	"metadata", "raft", "streams", "storage",
}

// recordDirs are the folders, inside a module jar or below a module's
// src/main/resources, that hold its record schemas.
var recordDirs = []string{"common/message", "common/metadata", "message"}

// Source is an opened spec location: the message specs and, when the
// location has them, the record schemas of Kafka's modules.
type Source struct {
	FS fs.FS // the directory holding the message *.json files; nil when the location has none
	// Records are the record-schema folders found beside the message specs,
	// one per module, in the order of [RecordModules] (unknown modules
	// last, by name). Read them with [Source.ReadRecords].
	Records []Records
	Path    string // what the user gave
	// Label is a short name for the release: the version in the jar or
	// distribution name (kafka-clients-4.3.0.jar is "4.3.0"), the release
	// in a PROVENANCE file, the version in a checkout's gradle.properties,
	// or "spec".
	Label   string
	closers []func() error
}

// Records is one module's folder of record schemas.
type Records struct {
	Module string // e.g. "group-coordinator", "metadata"
	Path   string // the jar or folder it was read from
	FS     fs.FS  // the directory holding the module's *.json files
}

// Close releases the jar files, if any.
func (s *Source) Close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// part is what one path contributes to a source.
type part struct {
	path     string
	messages fs.FS
	records  []Records
	label    string // "" when the path says nothing about its release
	closers  []func() error
}

// Open opens a spec location: a directory of *.json files, a Kafka source
// checkout, a Kafka distribution folder or its libs/ folder, a jar
// (kafka-clients or a module jar), a folder of module folders of record
// schemas, or several of these of one release separated by commas
// ("kafka-clients-4.3.0.jar,kafka-metadata-4.3.0.jar"). Exactly one of them
// may hold message specs; the others add record schemas.
func Open(p string) (*Source, error) {
	paths := []string{p}
	if _, err := os.Stat(p); err != nil && strings.Contains(p, ",") {
		paths = splitPaths(p)
	}
	src := &Source{Path: p}
	var parts []*part
	fail := func(err error) (*Source, error) {
		for _, pt := range parts {
			for _, c := range pt.closers {
				c()
			}
		}
		return nil, err
	}
	for _, q := range paths {
		pt, err := openPart(q)
		if err != nil {
			return fail(err)
		}
		parts = append(parts, pt)
	}
	var msgFrom *part
	for _, pt := range parts {
		if pt.messages != nil {
			if msgFrom != nil {
				return fail(fmt.Errorf("spec: both %s and %s hold message specs; give one of them (the others may only add record schemas)", msgFrom.path, pt.path))
			}
			msgFrom = pt
		}
	}
	for _, pt := range parts {
		if pt.label == "" {
			continue
		}
		if src.Label == "" || pt == msgFrom {
			if src.Label != "" && !sameRelease(src.Label, pt.label) {
				return fail(differentReleases(parts))
			}
			src.Label = pt.label
		} else if !sameRelease(src.Label, pt.label) {
			return fail(differentReleases(parts))
		}
	}
	if src.Label == "" {
		src.Label = "spec"
	}
	seen := map[string]string{}
	for _, pt := range parts {
		src.closers = append(src.closers, pt.closers...)
		for _, r := range pt.records {
			if prev, dup := seen[r.Module]; dup {
				src.Close()
				return nil, fmt.Errorf("spec: record schemas of module %s found twice: in %s and %s", r.Module, prev, r.Path)
			}
			seen[r.Module] = r.Path
			src.Records = append(src.Records, r)
		}
	}
	if msgFrom != nil {
		src.FS = msgFrom.messages
	}
	sortRecords(src.Records)
	return src, nil
}

// maxCommasInPath is how many commas splitPaths keeps inside one path.
const maxCommasInPath = 8

// splitPaths splits a comma-separated list of paths. A comma may be part
// of a path (a home folder named "a,b", under which specfind finds the
// jars it joins with commas): at each point the longest run of pieces,
// with at most maxCommasInPath commas, that names an existing file or
// folder is one path, else the next piece alone. Blank pieces are
// dropped and the others trimmed of spaces.
func splitPaths(p string) []string {
	pieces := strings.Split(p, ",")
	var out []string
	for i := 0; i < len(pieces); {
		j := i + 1
		for k := min(len(pieces), i+1+maxCommasInPath); k > i+1; k-- {
			if _, err := os.Stat(strings.TrimSpace(strings.Join(pieces[i:k], ","))); err == nil {
				j = k
				break
			}
		}
		if q := strings.TrimSpace(strings.Join(pieces[i:j], ",")); q != "" {
			out = append(out, q)
		}
		i = j
	}
	return out
}

func differentReleases(parts []*part) error {
	var l []string
	for _, pt := range parts {
		if pt.label != "" {
			l = append(l, fmt.Sprintf("%s is %s", pt.path, pt.label))
		}
	}
	return fmt.Errorf("spec: the paths are of different releases: %s", strings.Join(l, ", "))
}

// sameRelease reports whether two labels name the same release, taking
// "4.3" and "4.3.0" to be the same.
func sameRelease(a, b string) bool {
	trim := func(s string) string {
		for strings.HasSuffix(s, ".0") && strings.Count(s, ".") > 1 {
			s = strings.TrimSuffix(s, ".0")
		}
		return s
	}
	return trim(a) == trim(b)
}

func sortRecords(rs []Records) {
	rank := func(m string) int {
		for i, k := range RecordModules {
			if k == m {
				return i
			}
		}
		return len(RecordModules)
	}
	sort.SliceStable(rs, func(i, j int) bool {
		ri, rj := rank(rs[i].Module), rank(rs[j].Module)
		if ri != rj {
			return ri < rj
		}
		return rs[i].Module < rs[j].Module
	})
}

func openPart(p string) (*part, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if !st.IsDir() {
		pt, err := openJar(p, "")
		if err == nil && pt.messages == nil && len(pt.records) == 0 {
			for _, c := range pt.closers {
				c()
			}
			return nil, fmt.Errorf("spec: %s: no record schemas (*.json under %s)", p, strings.Join(recordDirs, ", "))
		}
		return pt, err
	}
	dir := os.DirFS(p)
	// A source checkout: messages of the clients module, records of the
	// others.
	if isDir(dir, checkoutDir) {
		pt := &part{path: p}
		pt.messages, _ = fs.Sub(dir, checkoutDir)
		for _, m := range RecordModules {
			for _, d := range recordDirs {
				rd := m + "/src/main/resources/" + d
				if hasJSON(dir, rd) {
					sub, _ := fs.Sub(dir, rd)
					pt.records = append(pt.records, Records{Module: m, Path: filepath.Join(p, filepath.FromSlash(rd)), FS: sub})
					break
				}
			}
		}
		pt.label = provenanceLabel(pt.messages)
		if pt.label == "" {
			pt.label = gradleVersion(dir)
		}
		return pt, nil
	}
	// A distribution folder, or its libs/ folder.
	if jars := listJars(p); jars.clients != nil {
		return openLibs(p, jars)
	}
	if isDir(dir, "libs") {
		libs := filepath.Join(p, "libs")
		if jars := listJars(libs); jars.clients != nil {
			pt, err := openLibs(libs, jars)
			if err == nil && pt.label == "" {
				pt.label = versionSuffix(filepath.Base(p))
			}
			return pt, err
		}
	}
	// A folder of module folders of record schemas (../shared/kafka-records/4.3).
	var recs []Records
	for _, m := range RecordModules {
		if hasJSON(dir, m) {
			sub, _ := fs.Sub(dir, m)
			recs = append(recs, Records{Module: m, Path: filepath.Join(p, m), FS: sub})
		}
	}
	if len(recs) > 0 && !hasJSON(dir, ".") {
		return &part{path: p, records: recs, label: provenanceLabel(dir)}, nil
	}
	// A plain folder of message specs.
	return &part{path: p, messages: dir, label: provenanceLabel(dir)}, nil
}

func isRecordModule(m string) bool {
	for _, k := range RecordModules {
		if k == m {
			return true
		}
	}
	return false
}

// jarName matches kafka-ARTIFACT-VERSION.jar; VERSION starts with a digit.
var jarName = regexp.MustCompile(`^kafka-([a-z]+(?:-[a-z]+)*)-([0-9][0-9A-Za-z.+_-]*)\.jar$`)

// classifierSuffixes mark jars that are not the main artifact.
var classifierSuffixes = []string{"-test", "-tests", "-sources", "-javadoc", "-test-sources"}

// ParseJarName splits kafka-ARTIFACT-VERSION.jar into its artifact
// ("clients", "group-coordinator") and version ("4.3.0"); ok is false for
// other names and for test, source and javadoc jars.
func ParseJarName(name string) (artifact, version string, ok bool) {
	m := jarName.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	for _, s := range classifierSuffixes {
		if strings.HasSuffix(m[2], s) {
			return "", "", false
		}
	}
	return m[1], m[2], true
}

type libJars struct {
	clients []string // kafka-clients-*.jar file names
	modules map[string]string
}

// listJars finds the kafka-clients and record-module jars in a folder.
func listJars(dir string) libJars {
	var out libJars
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	out.modules = map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		art, v, ok := ParseJarName(e.Name())
		if !ok {
			continue
		}
		if art == "clients" {
			out.clients = append(out.clients, e.Name())
			continue
		}
		for _, m := range RecordModules {
			if art == m {
				out.modules[m+"\x00"+v] = e.Name()
			}
		}
	}
	return out
}

// openLibs opens the kafka-clients jar of a libs folder and the module jars
// of the same version beside it.
func openLibs(dir string, jars libJars) (*part, error) {
	if len(jars.clients) > 1 {
		return nil, fmt.Errorf("spec: %s holds several kafka-clients jars (%s); give one of them with --spec", dir, strings.Join(jars.clients, ", "))
	}
	clients := jars.clients[0]
	_, version, _ := ParseJarName(clients)
	pt, err := openJar(filepath.Join(dir, clients), "clients")
	if err != nil {
		return nil, err
	}
	pt.path = dir
	for _, m := range RecordModules {
		name, ok := jars.modules[m+"\x00"+version]
		if !ok {
			continue
		}
		mp, err := openJar(filepath.Join(dir, name), m)
		if err != nil {
			for _, c := range pt.closers {
				c()
			}
			return nil, err
		}
		pt.records = append(pt.records, mp.records...)
		pt.closers = append(pt.closers, mp.closers...)
	}
	return pt, nil
}

// isGzip reports whether the file p starts with gzip's magic number.
func isGzip(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && b[0] == 0x1f && b[1] == 0x8b
}

// openJar opens one jar. A module jar (kafka-MODULE-VERSION.jar of one of
// [RecordModules]) holds record schemas; any other jar holds message specs,
// under common/message (kafka-clients) or at its root.
func openJar(p, artifact string) (*part, error) {
	if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("spec: %s: %w", p, errNotRegular)
	}
	zr, err := zip.OpenReader(p)
	if err != nil {
		if isGzip(p) {
			return nil, fmt.Errorf("spec: %s is a gzip-compressed file (the .tgz Kafka download?), not a jar/zip: unpack it with tar -xzf and give the folder it makes (kafka_2.13-VERSION), or its libs/kafka-clients-VERSION.jar: %w", p, err)
		}
		return nil, fmt.Errorf("spec: %s is neither a directory nor a jar/zip: %w", p, err)
	}
	if len(zr.File) > 1<<20 {
		zr.Close()
		return nil, fmt.Errorf("spec: %s has %d entries, more than a jar of Kafka's has", p, len(zr.File))
	}
	pt := &part{path: p, closers: []func() error{zr.Close}}
	art, version, named := ParseJarName(filepath.Base(p))
	if artifact == "" {
		artifact = art
	}
	if named {
		pt.label = version
	}
	root := fs.FS(&zr.Reader)
	if isRecordModule(artifact) {
		for _, d := range recordDirs {
			if hasJSON(root, d) {
				sub, _ := fs.Sub(root, d)
				pt.records = append(pt.records, Records{Module: artifact, Path: p, FS: sub})
				break
			}
		}
	} else if isDir(root, jarDir) {
		pt.messages, _ = fs.Sub(root, jarDir)
	} else {
		pt.messages = root
	}
	if pt.label == "" {
		fsys := pt.messages
		if fsys == nil && len(pt.records) > 0 {
			fsys = pt.records[0].FS
		}
		if fsys != nil {
			pt.label = provenanceLabel(fsys)
		}
	}
	return pt, nil
}

func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}

func hasJSON(fsys fs.FS, dir string) bool {
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	return err == nil && len(names) > 0
}

// provenanceLabel takes the release from a PROVENANCE file ("kafka 4.3
// from ..."), or "" when there is none. A label with control or format
// characters is quoted (see printable).
func provenanceLabel(fsys fs.FS) string {
	f, err := openRegular(fsys, "PROVENANCE")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	if sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && strings.EqualFold(fields[0], "kafka") {
			return printable(fields[1]) // build, serve and diff print it
		}
	}
	return ""
}

// gradleVersion reads "version=..." from a checkout's gradle.properties.
func gradleVersion(dir fs.FS) string {
	f, err := openRegular(dir, "gradle.properties")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == "version" {
			return printable(strings.TrimSpace(v))
		}
	}
	return ""
}

// distVersion matches the version at the end of a distribution folder name
// (kafka_2.13-4.3.0).
var distVersion = regexp.MustCompile(`-([0-9]+(?:\.[0-9]+)+(?:-[0-9A-Za-z.]+)?)$`)

func versionSuffix(name string) string {
	if m := distVersion.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// errNotRegular is the cause when a spec file, a jar or a file beside
// them is a named pipe, a device or a folder: opening a pipe would block
// until something writes to it, and a device may never end.
var errNotRegular = errors.New("not a regular file")

// openRegular opens name in fsys when it is a regular file (or a
// symbolic link to one).
func openRegular(fsys fs.FS, name string) (fs.File, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return fsys.Open(name)
}

// ErrNoSpecs means the location holds no *.json files.
var ErrNoSpecs = errors.New("no *.json spec files found")

// ReadAll parses every *.json file of the message specs, in name order.
// Parse errors of all files are collected into one [ErrorList].
func (s *Source) ReadAll() ([]*File, error) {
	if s.FS == nil {
		if len(s.Records) > 0 {
			return nil, fmt.Errorf("spec: %s: %w: it holds record schemas only; add the message specs (a kafka-clients jar or a spec folder) separated by a comma", s.Path, ErrNoSpecs)
		}
		return nil, fmt.Errorf("spec: %s: %w", s.Path, ErrNoSpecs)
	}
	files, err := readDir(s.FS, "", s.Path)
	if err == nil && len(files) == 0 {
		if subs := specSubdirs(s.Path); len(subs) > 0 {
			return nil, fmt.Errorf("spec: %s: %w; give one of the folders in it that hold them: %s", s.Path, ErrNoSpecs, strings.Join(subs, ", "))
		}
		return nil, fmt.Errorf("spec: %s: %w", s.Path, ErrNoSpecs)
	}
	return files, err
}

// specSubdirs lists the folders of dir (at most 10, among its first
// 10 000 entries) that hold message specs (a RequestHeader.json), as a
// folder of releases does (../shared/kafka-spec: 3.9, 4.0, ...).
func specSubdirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for i, e := range entries {
		if i == 10000 {
			break
		}
		p := filepath.Join(dir, e.Name())
		if st, err := os.Stat(filepath.Join(p, "RequestHeader.json")); err == nil && st.Mode().IsRegular() {
			if out = append(out, p); len(out) == 10 {
				break
			}
		}
	}
	return out
}

// ReadRecords parses the record schemas of every module, module by module
// and each in name order. File names are prefixed with the module
// ("metadata/TopicRecord.json") so that errors say where a file is. Parse
// errors of all files are collected into one [ErrorList]; a source without
// record schemas gives no files and no error.
func (s *Source) ReadRecords() ([]*File, error) {
	var files []*File
	var errs ErrorList
	for _, r := range s.Records {
		fl, err := readDir(r.FS, r.Module+"/", r.Path)
		files = append(files, fl...)
		var l ErrorList
		if errors.As(err, &l) {
			errs = append(errs, l...)
		} else if err != nil {
			return nil, err
		}
	}
	return files, errs.Err()
}

// readDir parses the *.json files of one folder, naming each prefix+name;
// where names the folder or jar in an error listing it.
func readDir(fsys fs.FS, prefix, where string) ([]*File, error) {
	// Not fs.Glob, which says nothing when the folder cannot be listed
	// (a jar with two entries of one name).
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("spec: %s: %w", where, err)
	}
	var names []string
	for _, e := range entries {
		if ok, _ := path.Match("*.json", e.Name()); ok {
			names = append(names, e.Name())
		}
	}
	if len(names) > maxSpecFiles {
		return nil, fmt.Errorf("spec: %s*.json: %d files, more than %d", prefix, len(names), maxSpecFiles)
	}
	sort.Strings(names)
	var files []*File
	var errs ErrorList
	total := 0
	for _, name := range names {
		fname := prefix + path.Base(name)
		// Every byte read counts against the budget, those of a file
		// refused as too large too: a jar of many entries that each
		// inflate past maxSpecFile would otherwise inflate them all.
		b, err := readLimited(fsys, name)
		if total += len(b); total > maxFolderBytes {
			errs = append(errs, &Error{Pos: Pos{File: fname}, Err: fmt.Errorf("the files up to this one hold more than %d bytes; not reading further", maxFolderBytes)})
			break
		}
		if err != nil {
			errs = append(errs, &Error{Pos: Pos{File: fname}, Err: err})
			continue
		}
		f, err := Parse(fname, b)
		if err != nil {
			var l ErrorList
			if errors.As(err, &l) {
				errs = append(errs, l...)
			} else {
				errs = append(errs, &Error{Pos: Pos{File: fname}, Err: err})
			}
			continue
		}
		files = append(files, f)
	}
	return files, errs.Err()
}

// readLimited reads the file name of fsys, at most maxSpecFile bytes. On
// an error it returns the bytes read before it too (maxSpecFile+1 for a
// file too large), for the caller's budget.
func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := openRegular(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpecFile+1))
	if err != nil {
		return b, err
	}
	if len(b) > maxSpecFile {
		return b, fmt.Errorf("file larger than %d bytes", maxSpecFile)
	}
	return b, nil
}
