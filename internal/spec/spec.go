// Package spec reads Apache Kafka's message definition files (JSON with
// comments) into raw structures that remember where every value came from.
//
// # Sources
//
// [Open] accepts a directory of *.json files, a Kafka source checkout (the
// files under clients/src/main/resources/common/message are used), a
// kafka-clients jar (entries common/message/*.json), a Kafka distribution
// folder or its libs/ folder, module jars and folders of record schemas, and
// several of these of one release separated by commas. Besides the message
// specs, a [Source] exposes the record schemas of Kafka's modules (the keys
// and values of the internal topics, KRaft's metadata records) as
// [Source.Records]. The specs are read in place; nothing is copied.
//
// # Positions
//
// Every raw value carries a [Pos] (file, line, column). Errors are
// [*Error] values built from a position, a field path and a cause, so that a
// bad spec is reported as "FetchRequest.json:12:7: Topics.Partitions: ...".
//
// Checking what the values mean (version ranges, types, tags) is the job of
// package schema; this package only checks the syntax and the key set.
package spec

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pos is a position in a spec file. Line and Col are 1-based.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return printable(p.File)
	}
	return fmt.Sprintf("%s:%d:%d", printable(p.File), p.Line, p.Col)
}

// printable returns s, or s quoted when it holds anything a terminal
// would act on (a file name from a jar, a field path with a bad name).
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Error is a problem found in a spec: where, in which field, and what.
type Error struct {
	Pos  Pos
	Path string // field path inside the message, e.g. "Topics.Partitions.Index"
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(printable(e.Path))
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorList is a sortable list of spec errors; it is itself an error.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is and errors.As look at every entry.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Sort orders the list by file, line and column.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// Err returns nil for an empty list and the list otherwise.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// MaxPathLen bounds the length of a field path that [JoinPath] builds
// for an error. Kafka's longest paths are under 100 bytes; a path is
// kept for every field, and a crafted file of a long name holding many
// fields would otherwise copy the name into each of their paths and
// print it in each of their errors.
const MaxPathLen = 256

// maxNameInPath is the most of one name a path keeps.
const maxNameInPath = 64

// JoinPath returns the field path of name inside parent
// ("Topics.Partitions"). A name longer than 64 bytes is cut to its first
// 64 and "..."; a path longer than MaxPathLen keeps "..." and its last
// bytes, the field's own name last.
func JoinPath(parent, name string) string {
	if len(name) > maxNameInPath {
		name = name[:runeStart(name, maxNameInPath)] + "..."
	}
	if parent == "" {
		return name
	}
	p := parent + "." + name
	if len(p) > MaxPathLen {
		p = "..." + p[runeStart(p, len(p)-(MaxPathLen-3)):]
	}
	return p
}

// runeStart returns the first index at or after i that starts a rune of
// s (or len(s)), so that a cut there splits no UTF-8 sequence.
func runeStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// Sentinel causes, for errors.Is.
var (
	ErrSyntax     = errors.New("malformed JSON")
	ErrUnknownKey = errors.New("unknown key")
	ErrKeyType    = errors.New("wrong JSON type")
	ErrMissing    = errors.New("missing required key")
	ErrDuplicate  = errors.New("duplicate")
	ErrTooDeep    = errors.New("nested too deeply")
	// ErrTooManyErrors is the cause of the error that ends a file's
	// list when more than MaxErrorsPerFile were found.
	ErrTooManyErrors = errors.New("too many errors")
)

// MaxErrorsPerFile bounds the errors kept for one file: the parser and
// the schema builder keep the first ones found and end the file's list
// with one that counts the others ([ErrTooManyErrors]). A crafted file of
// many small bad fields would otherwise make errors many times its size.
const MaxErrorsPerFile = 100

// ErrorBudget keeps the errors of several files, at most
// MaxErrorsPerFile for each, and counts the ones dropped.
type ErrorBudget struct {
	kept    map[string]int
	dropped map[string]*droppedErrors
}

type droppedErrors struct {
	first Pos // where the first one dropped is
	n     int
}

// Keep reports whether another error, at pos, fits in the budget of its
// file, and counts it either way.
func (b *ErrorBudget) Keep(pos Pos) bool {
	if b.kept == nil {
		b.kept, b.dropped = map[string]int{}, map[string]*droppedErrors{}
	}
	if b.kept[pos.File] < MaxErrorsPerFile {
		b.kept[pos.File]++
		return true
	}
	d := b.dropped[pos.File]
	if d == nil {
		d = &droppedErrors{first: pos}
		b.dropped[pos.File] = d
	}
	d.n++
	return false
}

// Summaries returns one error for each file with errors dropped, at the
// first one dropped and naming how many, by file name.
func (b *ErrorBudget) Summaries() ErrorList {
	var out ErrorList
	for _, d := range b.dropped {
		out = append(out, &Error{Pos: d.first, Err: fmt.Errorf("%w: %d more in this file not shown (the first of them is here)", ErrTooManyErrors, d.n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos.File < out[j].Pos.File })
	return out
}

// Text is a scalar spec value kept as text, with its position. Set is false
// when the key was absent.
type Text struct {
	S    string
	Pos  Pos
	Set  bool
	Null bool // the JSON literal null
}

// Int is an integer spec value with its position.
type Int struct {
	N   int64
	Pos Pos
	Set bool
}

// Bool is a boolean spec value with its position.
type Bool struct {
	B   bool
	Pos Pos
	Set bool
}

// File is one spec file: its name, its bytes and the message it defines.
type File struct {
	Name    string
	Source  []byte
	Message *Message
}

// Message is the raw top level of a spec file.
type Message struct {
	Pos                   Pos
	Name                  Text
	Type                  Text
	APIKey                Int
	ValidVersions         Text
	FlexibleVersions      Text
	DeprecatedVersions    Text
	Listeners             []Text
	LatestVersionUnstable Bool
	// HeaderVersions is the optional explicit header-version map (KIP-1313):
	// request or response header version by message version range.
	HeaderVersions []HeaderVersion
	Fields         []*Field
	CommonStructs  []*Struct
}

// HeaderVersion maps a range of message versions to a header version.
type HeaderVersion struct {
	Versions Text
	Header   Int
}

// Field is one raw field definition.
type Field struct {
	Pos              Pos
	Name             Text
	Type             Text
	Versions         Text
	NullableVersions Text
	TaggedVersions   Text
	FlexibleVersions Text
	Tag              Int
	Default          Text
	Ignorable        Bool
	MapKey           Bool
	ZeroCopy         Bool
	EntityType       Text
	About            Text
	Fields           []*Field
	HasFields        bool // the "fields" key was present (possibly empty)
}

// Struct is one raw commonStructs entry.
type Struct struct {
	Pos      Pos
	Name     Text
	Versions Text
	Fields   []*Field
}
