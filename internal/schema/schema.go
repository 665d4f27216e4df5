// Package schema turns raw spec files into immutable, checked descriptors:
// messages, structs, fields with their version ranges, types, tags and
// defaults, and a [Registry] of APIs by key and name.
//
// # Checks
//
// [Build] applies the rules of Kafka's message generator (and a few stricter
// ones, such as rejecting reversed version ranges and undefined struct
// types) and reports every problem as a [spec.Error] naming file:line:col and
// the field path. The codec and the renderers only ever see descriptors.
//
// # Header versions
//
// [Message.HeaderVersion] gives the request or response header version for a
// message version: from the spec's explicit "headerVersions" key when it has
// one, else derived from flexibleVersions with Kafka's two exceptions
// (ApiVersions responses always use header v0; ControlledShutdown v0 requests
// use request header v0).
package schema

import (
	"strings"

	"github.com/manifester/manifester/internal/spec"
)

// MessageType is the "type" of a spec file.
type MessageType uint8

// The spec file types.
const (
	TypeRequest MessageType = iota + 1
	TypeResponse
	TypeHeader
	TypeData
	TypeMetadata
	TypeCoordinatorKey
	TypeCoordinatorValue
)

var messageTypes = map[string]MessageType{
	"request": TypeRequest, "response": TypeResponse, "header": TypeHeader, "data": TypeData,
	"metadata": TypeMetadata, "coordinator-key": TypeCoordinatorKey, "coordinator-value": TypeCoordinatorValue,
}

func (t MessageType) String() string {
	for k, v := range messageTypes {
		if v == t {
			return k
		}
	}
	return "unknown"
}

// Message is one checked spec file.
type Message struct {
	Name      string      // "AlterConfigsRequest"
	Type      MessageType // request, response, header, data, ...
	APIKey    int16       // -1 when the type has none
	Valid     Versions    // validVersions
	Flexible  Versions    // flexibleVersions
	Listeners []string
	// LatestVersionUnstable marks the top valid version as unreleased.
	LatestVersionUnstable bool
	Deprecated            Versions
	// HeaderVersions is the explicit header-version map, when the spec has one.
	HeaderVersions []HeaderVersionRange
	Body           *Struct // the top-level struct (Name == message name)
	File           string
	Source         []byte // the file as read, comments included
	Structs        []*Struct
}

// HeaderVersionRange maps message versions to a header version.
type HeaderVersionRange struct {
	Versions Versions
	Header   int16
}

// Reserved reports whether the message only reserves its API key
// (validVersions "none").
func (m *Message) Reserved() bool { return m.Valid.Empty() }

// IsFlexible reports whether version v uses the flexible encoding.
func (m *Message) IsFlexible(v int16) bool { return m.Flexible.Contains(v) }

// Well-known API keys with header-version exceptions.
const (
	keyControlledShutdown = 7
	keyAPIVersions        = 18
)

// HeaderVersion returns the header version used with message version v.
// It is meaningful for requests and responses only.
func (m *Message) HeaderVersion(v int16) int16 {
	for _, hv := range m.HeaderVersions {
		if hv.Versions.Contains(v) {
			return hv.Header
		}
	}
	flex := m.Flexible.Contains(v)
	switch m.Type {
	case TypeRequest:
		if m.APIKey == keyControlledShutdown && v == 0 {
			return 0
		}
		if flex {
			return 2
		}
		return 1
	case TypeResponse:
		if m.APIKey == keyAPIVersions {
			return 0
		}
		if flex {
			return 1
		}
		return 0
	}
	return -1
}

// Struct is a struct type: the message body, an inline struct or a common
// struct.
type Struct struct {
	Name     string
	Versions Versions
	Fields   []*Field
	Common   bool
	Pos      spec.Pos
	// Tagged holds the tagged fields, sorted by tag.
	Tagged []*Field
}

// Field is one checked field.
type Field struct {
	Name     string
	Index    int // position in the parent struct's Fields
	Type     *Type
	Versions Versions
	Nullable Versions
	Tagged   Versions
	Tag      int32 // -1 when the field is never tagged
	// Flexible is the field's flexibleVersions override; HasFlexible tells
	// whether there is one.
	Flexible    Versions
	HasFlexible bool
	Default     Default
	Ignorable   bool
	MapKey      bool
	ZeroCopy    bool
	EntityType  string
	About       string
	Pos         spec.Pos
}

// IsTagged reports whether the field is sent as a tagged field at v.
func (f *Field) IsTagged(v int16) bool { return f.Tagged.Contains(v) }

// IsNullable reports whether null is legal at v.
func (f *Field) IsNullable(v int16) bool { return f.Nullable.Contains(v) }

// IsCompact reports whether the field uses compact lengths at v, given the
// message's flexible versions.
func (f *Field) IsCompact(msgFlexible Versions, v int16) bool {
	if f.HasFlexible {
		return f.Flexible.Contains(v)
	}
	return msgFlexible.Contains(v)
}

// API pairs the request and response of one API key.
type API struct {
	Key      int16
	Name     string // "AlterConfigs"
	Request  *Message
	Response *Message
}

// Reserved reports whether the key is only reserved (validVersions "none").
func (a *API) Reserved() bool { return a.Request.Reserved() }

// Valid returns the request's valid versions.
func (a *API) Valid() Versions { return a.Request.Valid }

// ControllerOnly reports whether only controllers accept the request.
func (a *API) ControllerOnly() bool {
	l := a.Request.Listeners
	return len(l) > 0 && !contains(l, "broker") && !contains(l, "zkBroker")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Registry holds every checked message of one spec source.
type Registry struct {
	Label          string // release label, e.g. "4.3"
	APIs           []*API // sorted by key
	RequestHeader  *Message
	ResponseHeader *Message
	Messages       []*Message // every message, sorted by name
	byKey          map[int16]*API
	byName         map[string]*API
	msgByName      map[string]*Message
}

// API returns the API with the given key.
func (r *Registry) API(key int16) (*API, bool) {
	a, ok := r.byKey[key]
	return a, ok
}

// HasRequest reports whether key and version name a request of the
// registry: an API that is not reserved, at a valid version of its
// request. Bytes that do not read as one are not a request these specs
// can decode (a client newer than them, or not Kafka at all).
func (r *Registry) HasRequest(key, version int16) bool {
	api, ok := r.byKey[key]
	return ok && api.Request != nil && !api.Reserved() && api.Request.Valid.Contains(version)
}

// APIByName returns the API with the given name, case-insensitively.
func (r *Registry) APIByName(name string) (*API, bool) {
	a, ok := r.byName[strings.ToLower(name)]
	return a, ok
}

// Message returns any message (including data and header messages) by name.
func (r *Registry) Message(name string) (*Message, bool) {
	m, ok := r.msgByName[name]
	return m, ok
}
