package codec

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Headers from the spec
//
// RequestHeader.json and ResponseHeader.json are messages like any other:
// when the registry has the header spec at the frame's header version, the
// header is decoded and encoded from its plan, so a field that a new header
// version adds is read, shown and written. The fields every header has keep
// their own nodes (request_api_key, request_api_version, correlation_id,
// client_id, tagged_fields); any other field is a node named after the spec
// field in snake_case (InstanceId: instance_id) with the spec's description.
// Without the header spec, or at a header version it does not define, the
// built-in layout of header v0-v2 (request) and v0-v1 (response) is used.

// headerPlan returns the plan of the request or response header at version
// hv, or nil when the registry's header spec does not define that version
// or does not have the shape every Kafka header has (a request header that
// starts with the int16 API key and version).
func (c *Codec) headerPlan(kind schema.MessageType, hv int16) *plan {
	m := c.Reg.RequestHeader
	if kind == schema.TypeResponse {
		m = c.Reg.ResponseHeader
	}
	if m == nil || !m.Valid.Contains(hv) {
		return nil
	}
	p, err := c.plan(m, hv)
	if err != nil {
		return nil
	}
	if kind == schema.TypeRequest {
		if len(p.wire) < 2 || p.wire[0].kind != schema.KindInt16 || p.wire[1].kind != schema.KindInt16 {
			return nil
		}
	}
	return p
}

// isCorrelationID and isClientID recognise the header fields with built-in
// nodes.
func isCorrelationID(fp *fieldPlan) bool {
	return fp.f.Name == "CorrelationId" && fp.kind == schema.KindInt32
}

func isClientID(fp *fieldPlan) bool {
	return fp.f.Name == "ClientId" && fp.kind == schema.KindString && !fp.compact
}

// snakeName turns a spec field name into a header node name:
// "InstanceId" is "instance_id".
func snakeName(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HeaderFieldName is the node name of a header spec field.
func HeaderFieldName(f *schema.Field) string {
	switch f.Name {
	case "RequestApiKey":
		return "request_api_key"
	case "RequestApiVersion":
		return "request_api_version"
	}
	return snakeName(f.Name)
}

// specHeader decodes the header fields after the first skip ones (the API
// key and version of a request, already read) from the header plan p.
func (d *decoder) specHeader(f *Frame, p *plan, hn span.ID, skip int) error {
	saved := d.bodyCat
	d.bodyCat = span.CatHeader
	err := d.specHeaderFields(f, p, hn, skip)
	d.bodyCat = saved
	return err
}

// specHeaderFields is specHeader with the header's category set.
func (d *decoder) specHeaderFields(f *Frame, p *plan, hn span.ID, skip int) error {
	f.Header = KidsValue(d.values(len(p.all)))
	clear(f.Header.Kids())
	for _, fp := range p.defaults {
		f.Header.Kids()[fp.index] = fp.def
	}
	if skip >= 2 {
		f.Header.Kids()[p.wire[0].index].SetInt(int64(f.API.Key))
		f.Header.Kids()[p.wire[1].index].SetInt(int64(f.Version))
	}
	roles := p.enc.hdrRoles // by position in p.wire: what isCorrelationID and isClientID say
	for i, fp := range p.wire[skip:] {
		out := &f.Header.Kids()[fp.index]
		switch roles[skip+i] {
		case hdrCorrelationID:
			if err := d.correlationID(f, hn); err != nil {
				return err
			}
			out.SetInt(int64(f.CorrelationID))
		case hdrClientID:
			if err := d.clientID(f, hn); err != nil {
				return err
			}
			out.SetBytes(f.ClientID)
			out.SetNull(f.ClientIDNull)
		default:
			start := d.r.Off
			n := d.node(hn, fp.hdrDesc, start, span.CatHeader)
			err := d.value(fp, fp.kind, fp.nullable, out, n)
			d.setLen(n, d.r.Off-start)
			if err != nil {
				return within(err, fp.hdrDesc.Name, -1)
			}
		}
	}
	if p.flexible {
		return d.headerTags(f, p, &f.Header, hn)
	}
	return nil
}

// appendSpecHeader appends the header fields after the first skip ones
// from the header plan p: the built-in ones from the frame, the others from
// f.Header (their defaults when f.Header is empty).
func appendSpecHeader(dst []byte, p *plan, f *Frame, skip int) ([]byte, error) {
	e := &encoder{}
	// The header's fields: the frame's, or the defaults (read only).
	hv := KidsValue(p.enc.defKids)
	if len(f.Header.Kids()) == len(p.all) {
		hv.SetKids(f.Header.Kids())
		for _, d := range p.enc.mustDefault {
			if fp := d.fp; !Equal(&hv.Kids()[fp.index], &fp.def) {
				return dst, &EncodeError{Path: "header." + HeaderFieldName(fp.f), Err: fmt.Errorf("%w: header v%d has no %s", ErrNonDefault, p.version, fp.f.Name)}
			}
		}
	} else if len(f.Header.Kids()) != 0 {
		return dst, &EncodeError{Path: "header", Err: fmt.Errorf("%w: header v%d has %d fields, value has %d", ErrShape, p.version, len(p.all), len(f.Header.Kids()))}
	}
	var err error
	for i, fp := range p.wire[skip:] {
		switch p.enc.hdrRoles[skip+i] {
		case hdrCorrelationID:
			dst = wire.AppendInt32(dst, f.CorrelationID)
		case hdrClientID:
			if dst, err = appendClientID(dst, f); err != nil {
				return dst, err
			}
		default:
			if dst, err = e.value(dst, fp, fp.kind, fp.nullable, &hv.Kids()[fp.index]); err != nil {
				return dst, withinEnc(withinEnc(err, HeaderFieldName(fp.f), -1), "header", -1)
			}
		}
	}
	if !p.flexible {
		if len(f.HeaderTags) > 0 {
			return dst, &EncodeError{Path: "header", Err: fmt.Errorf("%w (header version %d)", ErrTagsNotFlex, p.version)}
		}
		return dst, nil
	}
	if len(f.HeaderTags) > 0 {
		hv.SetUnknown(f.HeaderTags)
	}
	dst, err = e.tags(dst, p, &hv)
	if err != nil {
		err = withinEnc(err, "header", -1)
	}
	return dst, err
}

func appendClientID(dst []byte, f *Frame) ([]byte, error) {
	if f.ClientIDNull {
		return wire.AppendInt16(dst, -1), nil
	}
	if len(f.ClientID) > maxStringLen {
		return dst, &EncodeError{Path: "header.client_id", Err: ErrTooLong}
	}
	dst = wire.AppendInt16(dst, int16(len(f.ClientID)))
	return append(dst, f.ClientID...), nil
}
