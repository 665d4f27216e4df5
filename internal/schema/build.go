package schema

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/manifester/manifester/internal/spec"
)

// Sentinel causes of spec errors, for errors.Is.
var (
	ErrVersions    = errors.New("bad version range")
	ErrType        = errors.New("bad type")
	ErrUndefined   = errors.New("undefined struct type")
	ErrTag         = errors.New("bad tag")
	ErrDuplicate   = errors.New("duplicate")
	ErrNullable    = errors.New("bad nullableVersions")
	ErrDefault     = errDefault
	ErrAPIKey      = errors.New("bad apiKey")
	ErrInvalidSpec = errors.New("invalid spec")
)

var fieldNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// Load opens a spec location (see [spec.Open]), reads every file and builds
// the registry.
func Load(path string) (*Registry, error) {
	src, err := spec.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	files, err := src.ReadAll()
	if err != nil {
		return nil, err
	}
	reg, err := Build(files)
	if err != nil {
		return nil, err
	}
	reg.Label = src.Label
	return reg, nil
}

// Build checks raw spec files and builds the registry. All problems found
// are returned together as a [spec.ErrorList].
func Build(files []*spec.File) (*Registry, error) {
	b := &builder{}
	reg := &Registry{byKey: map[int16]*API{}, byName: map[string]*API{}, msgByName: map[string]*Message{}}
	requests := map[int16]*Message{}
	responses := map[int16]*Message{}
	reqPos := map[int16]spec.Pos{}
	respPos := map[int16]spec.Pos{}
	respValidPos := map[int16]spec.Pos{}
	for _, f := range files {
		m := b.message(f)
		if m == nil {
			continue
		}
		if prev, dup := reg.msgByName[m.Name]; dup {
			b.errf(f.Message.Name.Pos, "", ErrDuplicate, "message %s is also defined in %s", m.Name, prev.File)
			continue
		}
		reg.msgByName[m.Name] = m
		reg.Messages = append(reg.Messages, m)
		switch m.Type {
		case TypeRequest, TypeResponse:
			set, pos := requests, reqPos
			if m.Type == TypeResponse {
				set = responses
			}
			if prev, dup := set[m.APIKey]; dup {
				b.errf(f.Message.APIKey.Pos, "", ErrAPIKey, "found more than one %s with API key %d (also %s)", m.Type, m.APIKey, prev.File)
				continue
			}
			set[m.APIKey] = m
			if m.Type == TypeRequest {
				pos[m.APIKey] = f.Message.APIKey.Pos
			} else {
				respPos[m.APIKey] = f.Message.APIKey.Pos
				respValidPos[m.APIKey] = f.Message.ValidVersions.Pos
			}
		case TypeHeader:
			switch m.Name {
			case "RequestHeader":
				reg.RequestHeader = m
			case "ResponseHeader":
				reg.ResponseHeader = m
			}
		}
	}
	for key, req := range requests {
		resp, ok := responses[key]
		if !ok {
			b.errf(reqPos[key], "", ErrAPIKey, "failed to find response for API key %d", key)
			continue
		}
		name := strings.TrimSuffix(req.Name, "Request")
		if rn := strings.TrimSuffix(resp.Name, "Response"); rn != name {
			b.errf(reqPos[key], "", ErrAPIKey, "API key %d: request %s and response %s name different APIs", key, req.Name, resp.Name)
			continue
		}
		if !resp.Valid.Covers(req.Valid) {
			// Every page, vector and diff of a request version encodes
			// its response too.
			b.errf(respValidPos[key], "", ErrVersions, "validVersions %s of %s leaves out versions of its request: request %s has %s", resp.Valid, resp.Name, req.Name, req.Valid)
			continue
		}
		a := &API{Key: key, Name: name, Request: req, Response: resp}
		reg.byKey[key] = a
		reg.byName[strings.ToLower(name)] = a
		reg.APIs = append(reg.APIs, a)
	}
	for key, resp := range responses {
		if _, ok := requests[key]; !ok {
			b.errf(respPos[key], "", ErrAPIKey, "failed to find request for API key %d (%s)", key, resp.Name)
		}
	}
	b.checkHeaderRefs(reg)
	b.errs = append(b.errs, b.headerErrs...)
	sort.Slice(reg.APIs, func(i, j int) bool { return reg.APIs[i].Key < reg.APIs[j].Key })
	// APIs are looked up by name in any letter case, and name the site's
	// folders, which are one on case-insensitive file systems.
	lower := map[string]*API{}
	for _, a := range reg.APIs {
		if prev, dup := lower[strings.ToLower(a.Name)]; dup {
			b.errf(reqPos[a.Key], "", ErrDuplicate, "API %s (key %d) differs from %s (key %d) only in letter case", a.Name, a.Key, prev.Name, prev.Key)
			continue
		}
		lower[strings.ToLower(a.Name)] = a
	}
	sort.Slice(reg.Messages, func(i, j int) bool { return reg.Messages[i].Name < reg.Messages[j].Name })
	if len(b.errs) > 0 {
		b.errs.Sort()
		return nil, append(b.errs, b.budget.Summaries()...)
	}
	return reg, nil
}

type builder struct {
	errs spec.ErrorList
	// nerrs counts the errors found, kept or not: the checks of a
	// message compare it before and after.
	nerrs int
	// budget keeps at most spec.MaxErrorsPerFile errors of a file.
	budget spec.ErrorBudget
	// per message
	msg     *Message
	structs map[string]*Struct
	common  map[string]*spec.Struct
	pending []pendingRef
	typePos map[*Field]spec.Pos // where each struct-typed field names its type
	// headerRefs are the explicit header-version maps to check against
	// the header specs once every file is read.
	headerRefs  []headerRef
	headerErrs  spec.ErrorList
	nheaderErrs int // as nerrs, for headerErrs
}

type pendingRef struct {
	field *Field
	raw   *spec.Field
	path  string
	name  string
}

func (b *builder) errf(pos spec.Pos, path string, kind error, format string, args ...any) {
	b.nerrs++
	if b.budget.Keep(pos) {
		b.errs = append(b.errs, &spec.Error{Pos: pos, Path: path, Err: fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))})
	}
}

// versions parses a version key, applying def when the key is absent or blank.
func (b *builder) versions(t spec.Text, def Versions, path, key string) Versions {
	if !t.Set || strings.TrimSpace(t.S) == "" {
		return def
	}
	v, err := ParseVersions(t.S)
	if err != nil {
		b.errf(t.Pos, path, ErrVersions, "%s: %v", key, err)
		return def
	}
	return v
}

func (b *builder) message(f *spec.File) *Message {
	raw := f.Message
	n := b.nerrs
	m := &Message{Name: raw.Name.S, File: f.Name, Source: f.Source, APIKey: -1}
	b.msg = m
	if !fieldNameRE.MatchString(m.Name) {
		// The name becomes URLs, file names of the built site and terminal
		// output: letters and digits only, as in every Kafka spec.
		b.errf(raw.Name.Pos, "", ErrInvalidSpec, "invalid message name %q: want letters and digits, starting with a letter", m.Name)
		return nil
	}
	t, ok := messageTypes[raw.Type.S]
	if !ok {
		b.errf(raw.Type.Pos, "", ErrInvalidSpec, "unknown message type %q", raw.Type.S)
		return nil
	}
	m.Type = t
	switch t {
	case TypeRequest, TypeResponse:
		suffix := "Request"
		if t == TypeResponse {
			suffix = "Response"
		}
		if !strings.HasSuffix(m.Name, suffix) || m.Name == suffix {
			b.errf(raw.Name.Pos, "", ErrInvalidSpec, "%s name %q must end in %q", t, m.Name, suffix)
		}
		fallthrough
	case TypeMetadata, TypeCoordinatorKey, TypeCoordinatorValue:
		if !raw.APIKey.Set {
			b.errf(raw.Pos, "", ErrAPIKey, "%s %s needs an apiKey", t, m.Name)
		} else if raw.APIKey.N < 0 || raw.APIKey.N > 32767 {
			b.errf(raw.APIKey.Pos, "", ErrAPIKey, "apiKey %d out of range", raw.APIKey.N)
		} else {
			m.APIKey = int16(raw.APIKey.N)
		}
	default:
		if raw.APIKey.Set {
			m.APIKey = int16(raw.APIKey.N)
		}
	}
	if !raw.ValidVersions.Set {
		b.errf(raw.Pos, "", ErrVersions, "you must specify the version of the %s structure (validVersions)", m.Name)
		return nil
	}
	m.Valid = b.versions(raw.ValidVersions, None, "", "validVersions")
	if m.Valid.Open() {
		b.errf(raw.ValidVersions.Pos, "", ErrVersions, "validVersions %q does not specify a maximum version", raw.ValidVersions.S)
	} else if n := int(m.Valid.Hi) - int(m.Valid.Lo) + 1; n > MaxValidVersions {
		b.errf(raw.ValidVersions.Pos, "", ErrVersions, "validVersions %q holds %d versions, more than %d", raw.ValidVersions.S, n, MaxValidVersions)
	}
	if t != TypeRequest {
		if len(raw.Listeners) > 0 {
			b.errf(raw.Listeners[0].Pos, "", ErrInvalidSpec, "listeners (requestScope) are only allowed on requests")
		}
		if raw.LatestVersionUnstable.Set && raw.LatestVersionUnstable.B {
			b.errf(raw.LatestVersionUnstable.Pos, "", ErrInvalidSpec, "latestVersionUnstable is only allowed on requests")
		}
	}
	for _, l := range raw.Listeners {
		switch l.S {
		case "broker", "controller", "zkBroker":
			m.Listeners = append(m.Listeners, l.S)
		default:
			b.errf(l.Pos, "", ErrInvalidSpec, "unknown listener %q", l.S)
		}
	}
	m.LatestVersionUnstable = raw.LatestVersionUnstable.B
	m.Deprecated = b.versions(raw.DeprecatedVersions, None, "", "deprecatedVersions")
	if m.Reserved() {
		// The key is only reserved: flexibleVersions, fields and listeners
		// are ignored, as Kafka's generator does.
		m.Flexible = None
		m.Body = &Struct{Name: m.Name, Versions: None}
		if b.nerrs > n {
			return nil
		}
		return m
	}
	if !raw.FlexibleVersions.Set {
		b.errf(raw.Pos, "", ErrVersions, "you must specify a value for flexibleVersions")
	}
	m.Flexible = b.versions(raw.FlexibleVersions, None, "", "flexibleVersions")
	if !m.Flexible.Empty() && !m.Flexible.Open() {
		b.errf(raw.FlexibleVersions.Pos, "", ErrVersions, "flexibleVersions %q is not open-ended", raw.FlexibleVersions.S)
	}
	if t == TypeCoordinatorKey {
		if m.Valid != (Versions{0, 0}) {
			b.errf(raw.ValidVersions.Pos, "", ErrVersions, "coordinator-key validVersions must be exactly 0")
		}
		if !m.Flexible.Empty() {
			b.errf(raw.FlexibleVersions.Pos, "", ErrVersions, "coordinator-key flexibleVersions must be none")
		}
	}
	b.headerVersions(raw, m)

	b.structs = map[string]*Struct{}
	b.common = map[string]*spec.Struct{}
	b.pending = nil
	for _, cs := range raw.CommonStructs {
		if !isUpper(cs.Name.S) || !fieldNameRE.MatchString(cs.Name.S) {
			pos := cs.Pos
			if cs.Name.Set {
				pos = cs.Name.Pos // point at the bad name itself
			}
			b.errf(pos, "commonStructs", ErrType, "common struct name %q must be letters and digits, starting with an upper-case letter", cs.Name.S)
			continue
		}
		if _, dup := b.common[cs.Name.S]; dup {
			b.errf(cs.Name.Pos, "commonStructs", ErrDuplicate, "common struct %s is specified twice", cs.Name.S)
			continue
		}
		if !cs.Versions.Set {
			b.errf(cs.Pos, cs.Name.S, ErrVersions, "common struct %s needs versions", cs.Name.S)
		}
		b.common[cs.Name.S] = cs
	}
	// Common structs are built first so that references resolve; their
	// fields may in turn reference other common structs.
	for _, cs := range raw.CommonStructs {
		if _, ok := b.common[cs.Name.S]; !ok || b.structs[cs.Name.S] != nil {
			continue
		}
		s := &Struct{Name: cs.Name.S, Common: true, Pos: cs.Pos, Versions: b.versions(cs.Versions, All, cs.Name.S, "versions")}
		b.structs[s.Name] = s
		s.Fields = b.fields(cs.Fields, s, cs.Name.S, m.Valid.Intersect(s.Versions))
		m.Structs = append(m.Structs, s)
	}
	m.Body = &Struct{Name: m.Name, Versions: m.Valid, Pos: raw.Pos}
	m.Body.Fields = b.fields(raw.Fields, m.Body, "", m.Valid)
	for _, p := range b.pending {
		s, ok := b.structs[p.name]
		if !ok {
			b.errf(p.raw.Type.Pos, p.path, ErrUndefined, "struct type %s is not defined (no inline fields and no common struct of that name)", p.name)
			continue
		}
		if p.field.Type.Kind == KindArray {
			p.field.Type.Elem.Struct = s
		} else {
			p.field.Type.Struct = s
		}
	}
	if b.nerrs == n {
		b.checkStructGraph(m)
	}
	if b.nerrs > n {
		return nil
	}
	return m
}

func isUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// fields builds the fields of one struct. within is the set of versions the
// struct can appear in (for tagged/nullable subset checks).
func (b *builder) fields(raws []*spec.Field, parent *Struct, path string, within Versions) []*Field {
	out := make([]*Field, 0, len(raws))
	names := map[string]bool{}
	tags := map[int32]*spec.Field{}
	for _, raw := range raws {
		fpath := join(path, raw.Name.S)
		if !fieldNameRE.MatchString(raw.Name.S) {
			b.errf(raw.Name.Pos, fpath, ErrInvalidSpec, "invalid field name %q", raw.Name.S)
		}
		if names[strings.ToLower(raw.Name.S)] {
			b.errf(raw.Name.Pos, fpath, ErrDuplicate, "duplicate field name %q in %s", raw.Name.S, parent.Name)
			continue
		}
		names[strings.ToLower(raw.Name.S)] = true
		f := b.field(raw, fpath, within)
		if f == nil {
			continue
		}
		if f.Tag >= 0 {
			if prev, dup := tags[f.Tag]; dup {
				b.errf(raw.Tag.Pos, fpath, ErrTag, "tag %d is also used by %s", f.Tag, prev.Name.S)
			} else {
				tags[f.Tag] = raw
			}
		}
		f.Index = len(out)
		out = append(out, f)
	}
	// A struct's tags must be exactly 0..n-1. When one is missing, some tag
	// is >= n: the error points at the smallest such tag, the one that
	// breaks the sequence.
	for i := int32(0); i < int32(len(tags)); i++ {
		if _, ok := tags[i]; !ok {
			var bad *spec.Field
			for t, raw := range tags {
				if t >= int32(len(tags)) && (bad == nil || t < int32(bad.Tag.N)) {
					bad = raw
				}
			}
			b.errf(bad.Tag.Pos, join(path, bad.Name.S), ErrTag, "tags of %s are not contiguous: tag %d is missing before tag %d", parent.Name, i, bad.Tag.N)
			break
		}
	}
	for _, f := range out {
		if f.Tag >= 0 {
			parent.Tagged = append(parent.Tagged, f)
		}
	}
	sort.Slice(parent.Tagged, func(i, j int) bool { return parent.Tagged[i].Tag < parent.Tagged[j].Tag })
	return out
}

// join is spec.JoinPath: the path of field name inside parent, bounded
// in length.
func join(parent, name string) string { return spec.JoinPath(parent, name) }

func (b *builder) field(raw *spec.Field, path string, within Versions) *Field {
	f := &Field{Name: raw.Name.S, About: raw.About.S, EntityType: raw.EntityType.S, Pos: raw.Pos, Tag: -1,
		Ignorable: raw.Ignorable.B, MapKey: raw.MapKey.B, ZeroCopy: raw.ZeroCopy.B}
	f.Tagged = b.versions(raw.TaggedVersions, None, path, "taggedVersions")
	if !raw.Versions.Set || strings.TrimSpace(raw.Versions.S) == "" {
		if raw.TaggedVersions.Set {
			f.Versions = f.Tagged
		} else {
			b.errf(raw.Pos, path, ErrVersions, "field %s has no versions", raw.Name.S)
			return nil
		}
	} else {
		f.Versions = b.versions(raw.Versions, None, path, "versions")
	}
	f.Nullable = b.versions(raw.NullableVersions, None, path, "nullableVersions")
	if raw.FlexibleVersions.Set {
		f.HasFlexible = true
		f.Flexible = b.versions(raw.FlexibleVersions, None, path, "flexibleVersions")
	}
	t := b.typeOf(raw, f, path)
	if t == nil {
		return nil
	}
	f.Type = t

	// Nullability.
	if !f.Nullable.Empty() && !t.Kind.canBeNullable() {
		b.errf(raw.NullableVersions.Pos, path, ErrNullable, "type %s cannot be nullable", t.Name)
	}
	// Flexible override.
	if f.HasFlexible {
		if t.Kind != KindString && t.Kind != KindBytes {
			b.errf(raw.FlexibleVersions.Pos, path, ErrVersions, "flexibleVersions may only be set on string or bytes fields, not %s", t.Name)
		}
		if !f.Flexible.Empty() && !b.msg.Flexible.Covers(f.Flexible) {
			b.errf(raw.FlexibleVersions.Pos, path, ErrVersions, "field flexibleVersions %s is not within the message's %s", f.Flexible, b.msg.Flexible)
		}
	}
	// Tags.
	switch {
	case raw.Tag.Set && !raw.TaggedVersions.Set:
		b.errf(raw.Tag.Pos, path, ErrTag, "tag %d is set but taggedVersions is not", raw.Tag.N)
	case !raw.Tag.Set && raw.TaggedVersions.Set && !f.Tagged.Empty():
		b.errf(raw.TaggedVersions.Pos, path, ErrTag, "taggedVersions is set but the field has no tag")
	case raw.Tag.Set:
		if raw.Tag.N < 0 {
			b.errf(raw.Tag.Pos, path, ErrTag, "tag %d is negative", raw.Tag.N)
			break
		}
		f.Tag = int32(raw.Tag.N)
		if !f.Tagged.Empty() && !f.Tagged.Open() {
			b.errf(raw.TaggedVersions.Pos, path, ErrTag, "taggedVersions %s must be open-ended", f.Tagged)
		}
		if !f.Versions.Covers(f.Tagged) {
			b.errf(raw.TaggedVersions.Pos, path, ErrTag, "taggedVersions %s is outside versions %s", f.Tagged, f.Versions)
		}
		flex := b.msg.Flexible
		if f.HasFlexible {
			flex = f.Flexible
		}
		if !flex.Covers(f.Tagged) {
			b.errf(raw.TaggedVersions.Pos, path, ErrTag, "taggedVersions %s is outside flexibleVersions %s", f.Tagged, flex)
		}
		if raw.MapKey.B {
			b.errf(raw.Tag.Pos, path, ErrTag, "a mapKey field cannot be tagged")
		}
		if t.Kind == KindRecords {
			b.errf(raw.Tag.Pos, path, ErrTag, "a records field cannot be tagged")
		}
		if nt := f.Nullable.Intersect(f.Tagged); !nt.Empty() && nt != f.Tagged {
			b.errf(raw.NullableVersions.Pos, path, ErrTag, "nullableVersions must cover all or none of taggedVersions %s", f.Tagged)
		}
	}
	// Other flags.
	if raw.ZeroCopy.B && t.Kind != KindBytes {
		b.errf(raw.ZeroCopy.Pos, path, ErrType, "zeroCopy is only allowed on bytes fields")
	}
	if raw.EntityType.Set {
		elem := t
		if t.Kind == KindArray {
			elem = t.Elem
		}
		switch raw.EntityType.S {
		case "unknown":
		case "transactionalId", "groupId", "topicName":
			if elem.Kind != KindString {
				b.errf(raw.EntityType.Pos, path, ErrType, "entityType %s needs a string field", raw.EntityType.S)
			}
		case "producerId":
			if elem.Kind != KindInt64 {
				b.errf(raw.EntityType.Pos, path, ErrType, "entityType producerId needs an int64 field")
			}
		case "brokerId":
			if elem.Kind != KindInt32 {
				b.errf(raw.EntityType.Pos, path, ErrType, "entityType brokerId needs an int32 field")
			}
		default:
			b.errf(raw.EntityType.Pos, path, ErrType, "unknown entityType %q", raw.EntityType.S)
		}
	}
	// Default.
	d, err := parseDefault(t, raw.Default.S, raw.Default.Set, raw.Default.Null)
	if err != nil { // err already wraps ErrDefault
		b.nerrs++
		if b.budget.Keep(raw.Default.Pos) {
			b.errs = append(b.errs, &spec.Error{Pos: raw.Default.Pos, Path: path, Err: err})
		}
	}
	if d.Null && !f.Nullable.Covers(f.Versions.Intersect(within)) {
		b.errf(raw.Default.Pos, path, ErrDefault, "null default but not all versions of this field are nullable")
	}
	f.Default = d
	return f
}

// typeOf resolves a field's type, defining inline structs as it goes.
func (b *builder) typeOf(raw *spec.Field, f *Field, path string) *Type {
	name := strings.TrimSpace(raw.Type.S)
	t := &Type{Name: name}
	elemName := name
	isArray := strings.HasPrefix(name, "[]")
	if isArray {
		elemName = name[2:]
		if strings.HasPrefix(elemName, "[]") {
			b.errf(raw.Type.Pos, path, ErrType, "arrays of arrays are not allowed: %s", name)
			return nil
		}
	}
	elem := &Type{Name: elemName}
	if k, ok := primitiveKinds[elemName]; ok {
		elem.Kind = k
		if raw.HasFields {
			b.errf(raw.Type.Pos, path, ErrType, "non-array or struct field %s cannot have fields", raw.Name.S)
		}
		if isArray && k == KindRecords {
			b.errf(raw.Type.Pos, path, ErrType, "arrays of records are not allowed")
		}
	} else if isUpper(elemName) && fieldNameRE.MatchString(elemName) {
		elem.Kind = KindStruct
		if b.typePos == nil {
			b.typePos = map[*Field]spec.Pos{}
		}
		b.typePos[f] = raw.Type.Pos
		structVersions := f.Versions
		switch {
		case raw.HasFields:
			if _, isCommon := b.common[elemName]; isCommon {
				b.errf(raw.Type.Pos, path, ErrDuplicate, "can't re-specify the common struct %s", elemName)
				return nil
			}
			if _, dup := b.structs[elemName]; dup {
				b.errf(raw.Type.Pos, path, ErrDuplicate, "struct %s was specified twice", elemName)
				return nil
			}
			s := &Struct{Name: elemName, Versions: structVersions, Pos: raw.Pos}
			b.structs[elemName] = s
			s.Fields = b.fields(raw.Fields, s, path, f.Versions.Intersect(b.msg.Valid))
			elem.Struct = s
			b.msg.Structs = append(b.msg.Structs, s)
		default:
			b.pending = append(b.pending, pendingRef{field: f, raw: raw, path: path, name: elemName})
		}
	} else {
		b.errf(raw.Type.Pos, path, ErrType, "can't parse type %q", name)
		return nil
	}
	if isArray {
		t.Kind = KindArray
		t.Elem = elem
		return t
	}
	return elem
}
