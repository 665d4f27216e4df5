// Package recschema loads the record schemas of Kafka's internal topics
// and says how each topic's records are framed.
//
// # Schemas
//
// Kafka defines the keys and values of its internal topics in JSON files
// of the same language as the message specs, in its server modules:
// group-coordinator (__consumer_offsets), transaction-coordinator
// (__transaction_state), share-coordinator (__share_group_state), all of
// types "coordinator-key" and "coordinator-value"; metadata (KRaft's
// __cluster_metadata, type "metadata"); and raft, streams and storage
// (types "data" and "metadata", not internal-topic records). [Load] reads
// a folder of module folders (../shared/kafka-records/4.3), one module
// folder, module jars (kafka-<module>-<version>.jar, as a distribution's
// libs/ holds them); [FromFS] one module from any file system (the
// record folders package spec finds in a checkout, a distribution or jars). Each module is built as its own [schema.Registry], as
// Kafka's generator builds it, so the checks (and file:line:col errors) are
// those of the message specs.
//
// # Framing
//
// A coordinator record's key is an int16 record type (the apiKey of the
// coordinator-key and coordinator-value pair) then the key message at
// version 0; its value is an int16 version then the value message at that
// version; a null value is a tombstone. A __cluster_metadata record's
// value is an unsigned-varint frame version (1), an unsigned-varint apiKey
// and an unsigned-varint version, then the metadata record; its key is
// null. [TopicKind] names the framing of a topic.
package recschema

import (
	"archive/zip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// Kind is how a topic's records are framed.
type Kind uint8

// The internal-topic kinds.
const (
	KindNone        Kind = iota // not an internal topic with record schemas
	KindCoordinator             // int16 type key, int16 version value
	KindMetadata                // uvarint frame version, api key, version
)

// The internal topics and the modules that define their records.
var topics = map[string]struct {
	kind   Kind
	module string
}{
	"__consumer_offsets":  {KindCoordinator, "group-coordinator"},
	"__transaction_state": {KindCoordinator, "transaction-coordinator"},
	"__share_group_state": {KindCoordinator, "share-coordinator"},
	"__cluster_metadata":  {KindMetadata, "metadata"},
}

// Topics lists the internal topics whose records can be decoded, sorted.
func Topics() []string {
	out := make([]string, 0, len(topics))
	for t := range topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// TopicKind returns the framing of a topic's records and the module whose
// schemas define them; KindNone for other topics.
func TopicKind(topic string) (Kind, string) {
	t, ok := topics[topic]
	if !ok {
		return KindNone, ""
	}
	return t.kind, t.module
}

// Module is the record schemas of one Kafka module.
type Module struct {
	Name string // "group-coordinator"
	Reg  *schema.Registry
	// Topic is the internal topic whose records the module defines, or "".
	Topic string
	keys  map[int16]*schema.Message
	vals  map[int16]*schema.Message
	meta  map[int16]*schema.Message
}

// Key returns the coordinator-key of record type t.
func (m *Module) Key(t int16) (*schema.Message, bool) { k, ok := m.keys[t]; return k, ok }

// Value returns the coordinator-value of record type t.
func (m *Module) Value(t int16) (*schema.Message, bool) { v, ok := m.vals[t]; return v, ok }

// Metadata returns the metadata record of api key k.
func (m *Module) Metadata(k int16) (*schema.Message, bool) { r, ok := m.meta[k]; return r, ok }

// Set is every loaded module.
type Set struct {
	Modules []*Module // sorted by name
	byName  map[string]*Module
}

// Module returns a module by name.
func (s *Set) Module(name string) (*Module, bool) {
	if s == nil {
		return nil, false
	}
	m, ok := s.byName[name]
	return m, ok
}

// ForTopic returns the module that defines a topic's records.
func (s *Set) ForTopic(topic string) (Kind, *Module) {
	k, mod := TopicKind(topic)
	if k == KindNone {
		return KindNone, nil
	}
	m, ok := s.Module(mod)
	if !ok {
		return KindNone, nil
	}
	return k, m
}

// Messages returns every record message of every module, by module then
// name.
func (s *Set) Messages() []*Record {
	if s == nil {
		return nil
	}
	var out []*Record
	for _, m := range s.Modules {
		for _, msg := range m.Reg.Messages {
			out = append(out, &Record{Module: m, Msg: msg})
		}
	}
	return out
}

// Record is one record message with its module.
type Record struct {
	Module *Module
	Msg    *schema.Message
}

// Lookup finds a record message by name, case-insensitively; "module/Name"
// picks the module when two define the same name.
func (s *Set) Lookup(name string) (*Record, bool) {
	mod, n, hasMod := strings.Cut(name, "/")
	if !hasMod {
		n, mod = name, ""
	}
	for _, r := range s.Messages() {
		if (mod == "" || r.Module.Name == mod) && strings.EqualFold(r.Msg.Name, n) {
			return r, true
		}
	}
	return nil, false
}

// ErrNoRecords means a location holds no record schemas.
var ErrNoRecords = errors.New("no record schemas found")

// checkoutDirs are where a Kafka source checkout keeps a module's record
// schemas, relative to the module folder.
var checkoutDirs = []string{"src/main/resources/common/message", "src/main/resources/common/metadata", "src/main/resources/message"}

// Load reads record schemas from each path: a folder of module folders, a
// module folder, a module jar (kafka-group-coordinator-4.3.0.jar), or a
// Kafka distribution or its libs/ folder (the module jars in it).
func Load(paths ...string) (*Set, error) {
	s := &Set{byName: map[string]*Module{}}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		n := len(s.Modules)
		if !st.IsDir() {
			if err := s.loadJar(p); err != nil {
				return nil, err
			}
			continue
		}
		if err := s.loadDir(p); err != nil {
			return nil, err
		}
		if len(s.Modules) == n {
			return nil, fmt.Errorf("records: %s: %w (want a folder of module folders such as group-coordinator/ and metadata/, or one of them)", p, ErrNoRecords)
		}
	}
	s.sort()
	return s, nil
}

// jarDirs are where a module jar keeps its record schemas.
var jarDirs = []string{"common/message", "common/metadata", "message"}

// jarModule returns the module of a Kafka module jar's file name:
// "kafka-group-coordinator-4.3.0.jar" is group-coordinator.
func jarModule(name string) (string, bool) {
	base := strings.TrimSuffix(filepath.Base(name), ".jar")
	for _, m := range Modules {
		if rest, ok := strings.CutPrefix(base, "kafka-"+m+"-"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return m, true
		}
	}
	return "", false
}

// loadJar adds the module of a Kafka module jar.
func (s *Set) loadJar(p string) error {
	mod, ok := jarModule(p)
	if !ok {
		return fmt.Errorf("records: %s is not a Kafka module jar (kafka-<module>-<version>.jar, module one of %s)", p, strings.Join(Modules, ", "))
	}
	if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
		// A named pipe would block the open until something writes to it.
		return fmt.Errorf("records: %s: not a regular file", p)
	}
	zr, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	defer zr.Close()
	for _, d := range jarDirs {
		if sub, err := fs.Sub(&zr.Reader, d); err == nil {
			if names, _ := fs.Glob(sub, "*.json"); len(names) > 0 {
				return s.add(mod, sub)
			}
		}
	}
	return fmt.Errorf("records: %s: %w", p, ErrNoRecords)
}

func (s *Set) loadDir(p string) error {
	// A Kafka distribution (its libs/) or libs/ itself: the module jars.
	libs := p
	if st, err := os.Stat(filepath.Join(p, "libs")); err == nil && st.IsDir() {
		libs = filepath.Join(p, "libs")
	}
	if jars, _ := filepath.Glob(filepath.Join(libs, "kafka-*.jar")); len(jars) > 0 {
		sort.Strings(jars)
		found := false
		for _, j := range jars {
			if _, ok := jarModule(j); ok && !strings.HasSuffix(j, "-sources.jar") && !strings.HasSuffix(j, "-javadoc.jar") && !strings.HasSuffix(j, "-test.jar") {
				if err := s.loadJar(j); err != nil {
					return err
				}
				found = true
			}
		}
		if found {
			return nil
		}
	}
	fsys := os.DirFS(p)
	name := filepath.Base(filepath.Clean(p))
	if abs, err := filepath.Abs(p); err == nil {
		name = filepath.Base(abs) // "." names the current folder
	}
	if ok, err := s.tryModule(name, fsys); ok || err != nil {
		return err
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := s.tryModule(e.Name(), os.DirFS(filepath.Join(p, e.Name()))); err != nil {
			return err
		}
	}
	return nil
}

// tryModule loads fsys as module name when it (or its checkout layout)
// holds *.json files.
func (s *Set) tryModule(name string, fsys fs.FS) (bool, error) {
	for _, d := range checkoutDirs {
		if sub, err := fs.Sub(fsys, d); err == nil {
			if names, _ := fs.Glob(sub, "*.json"); len(names) > 0 {
				return true, s.add(name, sub)
			}
		}
	}
	if names, _ := fs.Glob(fsys, "*.json"); len(names) > 0 {
		return true, s.add(name, fsys)
	}
	return false, nil
}

// Modules lists the Kafka modules that hold record schemas, sorted.
var Modules = []string{"group-coordinator", "metadata", "raft", "share-coordinator", "storage", "streams", "transaction-coordinator"}

// FromFS builds one module from the *.json files at the top of fsys (the
// common/message or common/metadata folder of a module jar, for example)
// and adds it to s, which may be nil.
func FromFS(s *Set, module string, fsys fs.FS) (*Set, error) {
	if s == nil {
		s = &Set{byName: map[string]*Module{}}
	}
	if err := s.add(module, fsys); err != nil {
		return nil, err
	}
	s.sort()
	return s, nil
}

// moduleName matches the module names the site can use as a path
// segment (/records/<module>/<Record>/): a folder's name may hold "?",
// "#" or spaces, which break every link to the module's pages.
var moduleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func (s *Set) add(name string, fsys fs.FS) error {
	if !moduleName.MatchString(name) {
		return fmt.Errorf("records: module name %q (the name of its folder): want letters, digits, '.', '_' and '-', starting with a letter or digit", name)
	}
	src := &spec.Source{FS: fsys, Path: name, Label: name}
	files, err := src.ReadAll()
	if err != nil {
		return fmt.Errorf("records: module %s: %w", name, err)
	}
	reg, err := schema.Build(files)
	if err != nil {
		return fmt.Errorf("records: module %s:\n%w", name, err)
	}
	reg.Label = name
	m := &Module{Name: name, Reg: reg, keys: map[int16]*schema.Message{}, vals: map[int16]*schema.Message{}, meta: map[int16]*schema.Message{}}
	// A record names its schema by type and apiKey only, and each schema
	// names a folder of the site, one for names that differ in case on
	// case-insensitive file systems.
	type typeKey struct {
		t schema.MessageType
		k int16
	}
	byKey, lower := map[typeKey]*schema.Message{}, map[string]*schema.Message{}
	for _, msg := range reg.Messages {
		if prev, dup := lower[strings.ToLower(msg.Name)]; dup {
			return fmt.Errorf("records: module %s: %s: %s differs from %s only in letter case", name, msg.File, msg.Name, prev.Name)
		}
		lower[strings.ToLower(msg.Name)] = msg
		if msg.APIKey < 0 {
			continue
		}
		if prev, dup := byKey[typeKey{msg.Type, msg.APIKey}]; dup {
			return fmt.Errorf("records: module %s: %s: %s %s has apiKey %d, as %s has", name, msg.File, msg.Type, msg.Name, msg.APIKey, prev.Name)
		}
		byKey[typeKey{msg.Type, msg.APIKey}] = msg
	}
	for _, msg := range reg.Messages {
		switch msg.Type {
		case schema.TypeCoordinatorKey:
			m.keys[msg.APIKey] = msg
		case schema.TypeCoordinatorValue:
			m.vals[msg.APIKey] = msg
		case schema.TypeMetadata:
			m.meta[msg.APIKey] = msg
		}
	}
	for t, info := range topics {
		if info.module == name {
			m.Topic = t
		}
	}
	if prev, dup := s.byName[name]; dup {
		return fmt.Errorf("records: module %s is given twice (%d and %d schemas)", name, len(prev.Reg.Messages), len(reg.Messages))
	}
	s.byName[name] = m
	s.Modules = append(s.Modules, m)
	return nil
}

func (s *Set) sort() {
	sort.Slice(s.Modules, func(i, j int) bool { return s.Modules[i].Name < s.Modules[j].Name })
}

// Title names a record message for pages: "OffsetCommitValue
// (group-coordinator, __consumer_offsets)".
func (r *Record) Title() string {
	where := r.Module.Name
	if r.Module.Topic != "" {
		where += ", " + r.Module.Topic
	}
	return r.Msg.Name + " (" + where + ")"
}

// Slug is the record's path segment on the site: "group-coordinator/OffsetCommitValue".
func (r *Record) Slug() string { return path.Join(r.Module.Name, r.Msg.Name) }
