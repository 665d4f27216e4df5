package spec

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"

	"github.com/tailscale/hujson"
)

// Parse reads one spec file. The returned error is an [ErrorList]; all
// problems found are reported, not just the first. A file as Windows
// keeps it (CRLF line ends from a checkout with git's core.autocrlf, a
// UTF-8 byte order mark from Notepad) is read as the same text with LF
// line ends, which File.Source holds: line numbers are unchanged.
func Parse(name string, src []byte) (*File, error) {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	if bytes.Contains(src, []byte("\r\n")) {
		src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	}
	p := &parser{file: name, src: src}
	if err := p.checkDepth(); err != nil {
		return nil, ErrorList{err}
	}
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, ErrorList{p.syntaxError(err)}
	}
	f := &File{Name: name, Source: src}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		p.errf(v.StartOffset, "", ErrKeyType, "top level must be an object")
		return nil, p.errs
	}
	f.Message = p.message(v.StartOffset, obj)
	if len(p.errs) > 0 {
		p.errs.Sort()
		return nil, append(p.errs, p.budget.Summaries()...)
	}
	return f, nil
}

type parser struct {
	file  string
	src   []byte
	errs  ErrorList
	lines []int // offsets of line starts, built on first use by pos
	// budget drops the errors past MaxErrorsPerFile.
	budget ErrorBudget
}

// syntaxError turns hujson's "line L, column C" error into an *Error with a
// real position. hujson reports the offset only inside its message, so the
// offset is recovered by re-scanning for the first invalid prefix.
func (p *parser) syntaxError(err error) *Error {
	var line, col int
	msg := err.Error()
	if _, scanErr := fmt.Sscanf(msg, "hujson: line %d, column %d:", &line, &col); scanErr == nil {
		if i := bytes.Index([]byte(msg), []byte(": ")); i >= 0 {
			rest := msg[i+2:]
			if j := bytes.Index([]byte(rest), []byte(": ")); j >= 0 {
				msg = rest[j+2:]
			}
		}
	}
	return &Error{Pos: Pos{File: p.file, Line: line, Col: col}, Err: fmt.Errorf("%w: %s", ErrSyntax, msg)}
}

// pos turns a byte offset into a line and column. The line starts are
// found once per file, and each position is a binary search among them,
// so parsing stays linear in the file size however many positions are
// asked for.
func (p *parser) pos(off int) Pos {
	off = max(0, min(off, len(p.src)))
	if p.lines == nil {
		p.lines = append(make([]int, 0, 64), 0)
		for i, c := range p.src {
			if c == '\n' {
				p.lines = append(p.lines, i+1)
			}
		}
	}
	// The line holding off is the last line start <= off.
	i := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
	return Pos{File: p.file, Line: i + 1, Col: 1 + off - p.lines[i]}
}

func (p *parser) errf(off int, path string, kind error, format string, args ...any) {
	pos := p.pos(off)
	if !p.budget.Keep(pos) {
		return
	}
	p.errs = append(p.errs, &Error{Pos: pos, Path: path, Err: fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))})
}

type member struct {
	key string
	off int
	val *hujson.Value
}

// members lists an object's members, reporting duplicate keys.
func (p *parser) members(obj *hujson.Object, path string) []member {
	out := make([]member, 0, len(obj.Members))
	seen := make(map[string]*hujson.Value, len(obj.Members))
	for i := range obj.Members {
		m := &obj.Members[i]
		lit, _ := m.Name.Value.(hujson.Literal)
		key := lit.String()
		if prev, dup := seen[key]; dup {
			// Jackson keeps the last of repeated keys; Kafka's own specs
			// repeat a key with the same value (3.9 DescribeTopicPartitions).
			// A repeat with a different value is ambiguous: reject it.
			if string(p.src[prev.StartOffset:prev.EndOffset]) != string(p.src[m.Value.StartOffset:m.Value.EndOffset]) {
				p.errf(m.Name.StartOffset, path, ErrDuplicate, "key %q appears twice with different values", key)
			}
			continue
		}
		seen[key] = &m.Value
		out = append(out, member{key: key, off: m.Name.StartOffset, val: &m.Value})
	}
	return out
}

func (p *parser) text(m member, path string) Text {
	t := Text{Pos: p.pos(m.val.StartOffset), Set: true}
	switch v := m.val.Value.(type) {
	case hujson.Literal:
		switch v.Kind() {
		case '"':
			t.S = v.String()
		case 'n':
			t.Null = true
			t.S = "null"
		default: // numbers and booleans are accepted as text, as Jackson coerces them
			t.S = string(v)
		}
	default:
		p.errf(m.val.StartOffset, path, ErrKeyType, "%q must be a string", m.key)
	}
	return t
}

func (p *parser) integer(m member, path string) Int {
	n := Int{Pos: p.pos(m.val.StartOffset), Set: true}
	lit, ok := m.val.Value.(hujson.Literal)
	if !ok || (lit.Kind() != '0' && lit.Kind() != '"') {
		p.errf(m.val.StartOffset, path, ErrKeyType, "%q must be an integer", m.key)
		return n
	}
	s := string(lit)
	if lit.Kind() == '"' {
		s = lit.String()
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		p.errf(m.val.StartOffset, path, ErrKeyType, "%q must be an integer, got %s", m.key, string(lit))
		return n
	}
	n.N = v
	return n
}

func (p *parser) boolean(m member, path string) Bool {
	b := Bool{Pos: p.pos(m.val.StartOffset), Set: true}
	lit, ok := m.val.Value.(hujson.Literal)
	switch {
	case ok && lit.Kind() == 't':
		b.B = true
	case ok && lit.Kind() == 'f':
	case ok && lit.Kind() == '"' && (lit.String() == "true" || lit.String() == "false"):
		b.B = lit.String() == "true"
	default:
		p.errf(m.val.StartOffset, path, ErrKeyType, "%q must be true or false", m.key)
	}
	return b
}

// texts reads a list of strings; a bare string counts as a one-element list.
func (p *parser) texts(m member, path string) []Text {
	if arr, ok := m.val.Value.(*hujson.Array); ok {
		out := make([]Text, 0, len(arr.Elements))
		for i := range arr.Elements {
			out = append(out, p.text(member{key: m.key, val: &arr.Elements[i]}, path))
		}
		return out
	}
	return []Text{p.text(m, path)}
}

func (p *parser) message(off int, obj *hujson.Object) *Message {
	msg := &Message{Pos: p.pos(off)}
	for _, m := range p.members(obj, "") {
		switch m.key {
		case "name":
			msg.Name = p.text(m, "")
		case "type":
			msg.Type = p.text(m, "")
		case "apiKey":
			msg.APIKey = p.integer(m, "")
		case "validVersions":
			msg.ValidVersions = p.text(m, "")
		case "flexibleVersions":
			msg.FlexibleVersions = p.text(m, "")
		case "deprecatedVersions":
			msg.DeprecatedVersions = p.text(m, "")
		case "listeners":
			msg.Listeners = p.texts(m, "")
		case "latestVersionUnstable":
			msg.LatestVersionUnstable = p.boolean(m, "")
		case "headerVersions":
			msg.HeaderVersions = p.headerVersions(m)
		case "fields":
			msg.Fields = p.fields(m, "")
		case "commonStructs":
			msg.CommonStructs = p.structs(m)
		default:
			p.errf(m.off, "", ErrUnknownKey, "unknown top-level key %q", m.key)
		}
	}
	if !msg.Name.Set {
		p.errf(off, "", ErrMissing, `"name" is required`)
	}
	if !msg.Type.Set {
		p.errf(off, "", ErrMissing, `"type" is required`)
	}
	return msg
}

// headerVersions reads the explicit header-version key. It accepts a bare
// integer (one header version for every message version) or an object that
// maps version ranges to header versions: {"0-2": 1, "3+": 2}.
func (p *parser) headerVersions(m member) []HeaderVersion {
	switch v := m.val.Value.(type) {
	case hujson.Literal:
		return []HeaderVersion{{Versions: Text{S: "0+", Pos: p.pos(m.val.StartOffset), Set: true}, Header: p.integer(m, "")}}
	case *hujson.Object:
		if len(v.Members) == 0 {
			p.errf(m.val.StartOffset, "headerVersions", ErrMissing, "headerVersions is an empty map: give at least one range, e.g. {\"0+\": \"2\"}")
			return nil
		}
		var out []HeaderVersion
		for _, mm := range p.members(v, "headerVersions") {
			out = append(out, HeaderVersion{
				Versions: Text{S: mm.key, Pos: p.pos(mm.off), Set: true},
				Header:   p.integer(mm, "headerVersions"),
			})
		}
		return out
	}
	p.errf(m.val.StartOffset, "", ErrKeyType, `"headerVersions" must be an integer or an object of version ranges`)
	return nil
}

func (p *parser) structs(m member) []*Struct {
	arr, ok := m.val.Value.(*hujson.Array)
	if !ok {
		p.errf(m.val.StartOffset, "", ErrKeyType, `"commonStructs" must be an array`)
		return nil
	}
	var out []*Struct
	for i := range arr.Elements {
		el := &arr.Elements[i]
		obj, ok := el.Value.(*hujson.Object)
		if !ok {
			p.errf(el.StartOffset, "commonStructs", ErrKeyType, "each common struct must be an object")
			continue
		}
		s := &Struct{Pos: p.pos(el.StartOffset)}
		for _, mm := range p.members(obj, "commonStructs") {
			switch mm.key {
			case "name":
				s.Name = p.text(mm, "commonStructs")
			case "versions":
				s.Versions = p.text(mm, "commonStructs")
			case "fields":
				s.Fields = p.fields(mm, s.Name.S)
			default:
				p.errf(mm.off, "commonStructs", ErrUnknownKey, "unknown common struct key %q", mm.key)
			}
		}
		out = append(out, s)
	}
	return out
}

func (p *parser) fields(m member, parent string) []*Field {
	arr, ok := m.val.Value.(*hujson.Array)
	if !ok {
		p.errf(m.val.StartOffset, parent, ErrKeyType, `"fields" must be an array`)
		return nil
	}
	out := make([]*Field, 0, len(arr.Elements))
	for i := range arr.Elements {
		el := &arr.Elements[i]
		obj, ok := el.Value.(*hujson.Object)
		if !ok {
			p.errf(el.StartOffset, parent, ErrKeyType, "each field must be an object")
			continue
		}
		// The field is read into a local value and kept only when it has
		// a name and a type: one without is an error anyway, and the
		// empty objects of a crafted file ("{}", 3 bytes) would each cost
		// a Field (about 1 KB).
		var f Field
		p.field(&f, el.StartOffset, obj, parent)
		if f.Name.Set && f.Type.Set {
			kept := new(Field)
			*kept = f
			out = append(out, kept)
		}
	}
	return out
}

// join is JoinPath, the path of field name inside parent.
func join(parent, name string) string { return JoinPath(parent, name) }

// field reads the field object obj into f.
func (p *parser) field(f *Field, off int, obj *hujson.Object, parent string) {
	f.Pos = p.pos(off)
	ms := p.members(obj, parent)
	for _, m := range ms { // the name first, so later errors can name the field
		if m.key == "name" {
			f.Name = p.text(m, parent)
		}
	}
	path := join(parent, f.Name.S)
	for _, m := range ms {
		switch m.key {
		case "name":
		case "type":
			f.Type = p.text(m, path)
		case "versions":
			f.Versions = p.text(m, path)
		case "nullableVersions":
			f.NullableVersions = p.text(m, path)
		case "taggedVersions":
			f.TaggedVersions = p.text(m, path)
		case "flexibleVersions":
			f.FlexibleVersions = p.text(m, path)
		case "tag":
			f.Tag = p.integer(m, path)
		case "default":
			f.Default = p.text(m, path)
		case "ignorable":
			f.Ignorable = p.boolean(m, path)
		case "mapKey":
			f.MapKey = p.boolean(m, path)
		case "zeroCopy":
			f.ZeroCopy = p.boolean(m, path)
		case "entityType":
			f.EntityType = p.text(m, path)
		case "about":
			f.About = p.text(m, path)
		case "fields":
			f.HasFields = true
			f.Fields = p.fields(m, path)
		default:
			p.errf(m.off, path, ErrUnknownKey, "unknown field key %q", m.key)
		}
	}
	if !f.Name.Set {
		p.errf(off, parent, ErrMissing, `field "name" is required`)
	}
	if !f.Type.Set {
		p.errf(off, path, ErrMissing, `field "type" is required`)
	}
}
