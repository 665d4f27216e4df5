package refsite

import (
	"fmt"
	"strings"

	"github.com/manifester/manifester/internal/schema"
)

// HeaderUse is which header versions one API uses, per range of its
// versions.
type HeaderUse struct {
	Key      int16
	Name     string
	Href     string
	Request  string // "v0-v1: 1, v2+: 2"
	Response string
	// FromSpec is true when the request or response spec says its header
	// versions itself (headerVersions), false when they are derived from
	// flexibleVersions.
	FromSpec bool
}

// HeaderField is one field of a header message.
type HeaderField struct {
	Name     string
	Type     string
	Versions string
	Tagged   string
	About    string
}

type headersPage struct {
	Uses           []HeaderUse
	RequestFields  []HeaderField
	ResponseFields []HeaderField
	RequestValid   string
	ResponseValid  string
}

func headersView(reg *schema.Registry) *headersPage {
	p := &headersPage{}
	for _, api := range reg.APIs {
		if api.Reserved() {
			continue
		}
		p.Uses = append(p.Uses, HeaderUse{Key: api.Key, Name: api.Name, Href: "/apis/" + api.Name + "/",
			Request: headerRanges(api.Request), Response: headerRanges(api.Response),
			FromSpec: len(api.Request.HeaderVersions) > 0 || len(api.Response.HeaderVersions) > 0})
	}
	if h := reg.RequestHeader; h != nil {
		p.RequestFields, p.RequestValid = headerFields(h), h.Valid.String()
	}
	if h := reg.ResponseHeader; h != nil {
		p.ResponseFields, p.ResponseValid = headerFields(h), h.Valid.String()
	}
	return p
}

// headerRanges groups a message's versions by header version:
// "v0-v2: 1, v3+: 2".
func headerRanges(m *schema.Message) string {
	if m == nil || m.Reserved() {
		return "-"
	}
	var parts []string
	lo, cur := m.Valid.Lo, m.HeaderVersion(m.Valid.Lo)
	flush := func(hi int16) {
		r := fmt.Sprintf("v%d-v%d", lo, hi)
		if lo == hi {
			r = fmt.Sprintf("v%d", lo)
		}
		parts = append(parts, fmt.Sprintf("%s: %d", r, cur))
	}
	for v := m.Valid.Lo + 1; v <= m.Valid.Hi && v > m.Valid.Lo; v++ {
		if h := m.HeaderVersion(v); h != cur {
			flush(v - 1)
			lo, cur = v, h
		}
		if v == schema.MaxVersion {
			break
		}
	}
	flush(m.Valid.Hi)
	return strings.Join(parts, ", ")
}

func headerFields(m *schema.Message) []HeaderField {
	var out []HeaderField
	if m.Body == nil {
		return nil
	}
	for _, f := range m.Body.Fields {
		hf := HeaderField{Name: f.Name, Type: f.Type.Name, Versions: f.Versions.String(), About: f.About}
		if !f.Tagged.Empty() {
			hf.Tagged = fmt.Sprintf("tag %d, %s", f.Tag, f.Tagged.String())
		}
		out = append(out, hf)
	}
	return out
}
