package codec

import (
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// DecodeRequest decodes one request frame: int32 size, request header, body.
// The header names the API and version. b must hold exactly one frame.
func (c *Codec) DecodeRequest(b []byte, opts Options) (*Frame, error) {
	return c.decodeFrame(b, schema.TypeRequest, nil, 0, opts)
}

// DecodeResponse decodes one response frame of the given API and version
// (a response does not name them; they come from the paired request).
func (c *Codec) DecodeResponse(b []byte, api *schema.API, version int16, opts Options) (*Frame, error) {
	return c.decodeFrame(b, schema.TypeResponse, api, version, opts)
}

func (c *Codec) decodeFrame(b []byte, kind schema.MessageType, api *schema.API, version int16, opts Options) (*Frame, error) {
	cat := span.CatRequestBody
	if kind == schema.TypeResponse {
		cat = span.CatResponseBody
	}
	d := c.newDecoder(b, opts, cat)
	f := &Frame{Kind: kind, API: api, Version: version}
	root := span.None
	if d.t != nil {
		desc := descRequestRoot
		if kind == schema.TypeResponse {
			desc = descResponseRoot
		}
		root = d.t.Add(span.None, desc, 0, span.CatNone)
	}
	err := d.frame(f, root)
	d.done()
	if d.t != nil {
		d.t.TrimSpares() // what the frame's batches did not take, beyond a few MiB
	}
	f.Size = d.r.Off
	if d.noValues {
		f.Body, f.Header = Value{}, Value{}
	}
	if root != span.None {
		d.setLen(root, d.r.Off)
		if f.API != nil {
			m := f.Message()
			if desc, _ := c.msgDescs(m, f.Version); desc != nil {
				d.t.SetDesc(root, desc)
			} else {
				d.t.SetDesc(root, descMessageRoot)
				a := d.extra(root)
				a.Name, a.Type = m.Name, "message v"+strconv.Itoa(int(f.Version))
			}
		}
		if err != nil {
			d.finish(root, len(b), err)
			// The error's path is the path of the row it is set on.
			if row := d.errRow(err); row != span.None {
				err.(*wire.DecodeError).Path = d.t.Path(row)
			}
		}
		f.tree = d.t
	}
	d.free()
	return f, err
}

func (d *decoder) frame(f *Frame, root span.ID) error {
	r := &d.r
	total := len(r.B)
	fn := d.node(root, descFrame, 0, span.CatFrame)
	sn := d.node(fn, descSize, 0, span.CatFrame)
	d.push("Frame.size", -1)
	size, err := r.Int32()
	if err != nil {
		err = d.fail(sn, 0, fmt.Errorf("%w: need 4 bytes for the size prefix, have %d", wire.ErrFrameSize, total))
		d.pop()
		return err
	}
	if sn != span.None {
		row := &d.t.Nodes[sn]
		row.Val, row.Int, row.Len = span.ValInt, int64(size), 4
		d.setLen(fn, 4)
	}
	var sizeErr error
	end := 4 + int(size)
	switch {
	case size < 0:
		err := d.fail(sn, 0, fmt.Errorf("%w: negative size %d", wire.ErrFrameSize, size))
		d.pop()
		return err
	case int(size) > total-4:
		sizeErr = d.fail(sn, 0, fmt.Errorf("%w: size prefix says %d bytes follow, only %d do", wire.ErrFrameSize, size, total-4))
		end = total
	case int(size) < total-4:
		sizeErr = d.fail(sn, 0, fmt.Errorf("%w: size prefix says %d bytes follow, but %d do (%s after the frame)", wire.ErrFrameSize, size, total-4, english.Count(total-4-int(size), "byte")))
	}
	d.pop()
	full := r.B
	r.B = r.B[:end]
	err = d.headerAndBody(f, root)
	r.B = full
	if err == nil && r.Off < end {
		err = d.fail(root, r.Off, fmt.Errorf("%w: %d bytes after the end of the body", wire.ErrTrailing, end-r.Off))
	}
	if sizeErr != nil {
		return sizeErr
	}
	return err
}

// headerName is the name of the header's row, which error paths in the
// header start with.
func headerName(k schema.MessageType) string {
	if k == schema.TypeResponse {
		return "ResponseHeader"
	}
	return "RequestHeader"
}

func (d *decoder) headerAndBody(f *Frame, root span.ID) error {
	r := &d.r
	hs := r.Off
	ki := 0
	if f.Kind == schema.TypeResponse {
		ki = 1
	}
	hn := d.node(root, descHeaderAny[ki], hs, span.CatHeader)
	err := d.header(f, hn)
	if hn != span.None {
		d.setLen(hn, r.Off-hs)
		switch hv := int(f.HeaderVersion); {
		case f.API == nil:
			// An API the spec does not have: its header version is not
			// known, and the node names none.
		case hv >= 0 && hv < len(descHeader[ki]):
			d.t.SetDesc(hn, descHeader[ki][hv])
		default:
			d.extra(hn).Type = "v" + strconv.Itoa(hv)
		}
	}
	if err != nil {
		return within(err, headerName(f.Kind), -1)
	}
	m := f.Message()
	p := d.body // from the frame plan the header found
	if p == nil {
		p, err = d.c.plan(m, f.Version)
	}
	if err != nil {
		return within(d.fail(hn, 6, fmt.Errorf("%w: %v", wire.ErrVersion, err)), headerName(f.Kind), -1)
	}
	bs := r.Off
	bn := span.None
	if d.t != nil {
		_, desc := d.c.msgDescs(m, f.Version)
		bn = d.node(root, desc, bs, d.bodyCat)
	}
	err = d.structBody(p, &f.Body, bn)
	if err != nil {
		err = within(err, m.Name, -1)
	}
	d.setLen(bn, r.Off-bs)
	return err
}

// int16Leaf reads an int16 header field into a new leaf under hn; errors
// are within the leaf's name.
func (d *decoder) int16Leaf(hn span.ID, desc *span.Desc) (int16, span.ID, error) {
	r := &d.r
	off := r.Off
	n := d.node(hn, desc, off, span.CatHeader)
	v, err := r.Int16()
	if n != span.None {
		row := &d.t.Nodes[n]
		row.Val, row.Int, row.Len = span.ValInt, int64(v), int32(r.Off-off)
	}
	if err != nil {
		return 0, n, within(d.fail(n, off, fmt.Errorf("%w: %s", err, desc.Name)), desc.Name, -1)
	}
	return v, n, nil
}

func (d *decoder) header(f *Frame, hn span.ID) error {
	r := &d.r
	if f.Kind == schema.TypeRequest {
		off := r.Off
		key, kn, err := d.int16Leaf(hn, descAPIKey)
		if err != nil {
			return err
		}
		api, ok := d.c.api(key)
		if !ok {
			return d.unknownAPIHeader(f, hn, kn, off, key)
		}
		f.API = api
		off = r.Off
		ver, vn, err := d.int16Leaf(hn, descAPIVersion)
		if err != nil {
			return err
		}
		f.Version = ver
		var versionErr error
		if !api.Request.Valid.Contains(ver) {
			versionErr = within(d.fail(vn, off, fmt.Errorf("%w: %s v%d; valid versions are %s", wire.ErrVersion, api.Name, ver, api.Request.Valid)), descAPIVersion.Name, -1)
			if api.Request.Valid.Empty() || ver < api.Request.Valid.Hi {
				return versionErr
			}
			// A version newer than the spec (a client newer than the
			// spec): the rest of the header follows the flexible
			// versions, which are open-ended, so it is read before
			// failing; the body is not.
		}
		var hp *plan
		if fp := d.c.framePlanOf(api.Request, 0, ver); fp != nil {
			f.HeaderVersion, hp, d.body = fp.hv, fp.hdr, fp.body
		} else {
			f.HeaderVersion = api.Request.HeaderVersion(ver)
			hp = d.c.headerPlan(schema.TypeRequest, f.HeaderVersion)
		}
		if hp != nil {
			if err := d.specHeader(f, hp, hn, 2); err != nil {
				return err
			}
			return versionErr
		}
		if err := d.correlationID(f, hn); err != nil {
			return err
		}
		if f.HeaderVersion >= 1 {
			if err := d.clientID(f, hn); err != nil {
				return err
			}
		}
		if f.HeaderVersion >= 2 {
			if err := d.headerTags(f, nil, nil, hn); err != nil {
				return err
			}
		}
		return versionErr
	}
	if f.API == nil {
		return d.fail(hn, 4, fmt.Errorf("%w key: a response needs its API and version", ErrUnknownAPI))
	}
	if !f.API.Response.Valid.Contains(f.Version) {
		return d.fail(hn, 4, fmt.Errorf("%w: %s v%d; valid versions are %s", wire.ErrVersion, f.API.Name, f.Version, f.API.Response.Valid))
	}
	var hp *plan
	if fp := d.c.framePlanOf(f.API.Response, 1, f.Version); fp != nil {
		f.HeaderVersion, hp, d.body = fp.hv, fp.hdr, fp.body
	} else {
		f.HeaderVersion = f.API.Response.HeaderVersion(f.Version)
		hp = d.c.headerPlan(schema.TypeResponse, f.HeaderVersion)
	}
	if hp != nil {
		return d.specHeader(f, hp, hn, 0)
	}
	if err := d.correlationID(f, hn); err != nil {
		return err
	}
	if f.HeaderVersion >= 1 {
		return d.headerTags(f, nil, nil, hn)
	}
	return nil
}

// unknownAPIHeader fails a request whose API key (read at off, into
// leaf kn) the spec does not have. Every request header version begins
// with the key, the version and the correlation id, so those two are read,
// each when its bytes are there: a request of an API newer than the spec
// is still shown with its version, and paired with its response. The rest
// of the header depends on the API and is not read.
func (d *decoder) unknownAPIHeader(f *Frame, hn, kn span.ID, off int, key int16) error {
	err := within(d.fail(kn, off, fmt.Errorf("%w key %d", ErrUnknownAPI, key)), descAPIKey.Name, -1)
	if d.r.Remaining() < 2 {
		return err
	}
	if ver, _, verr := d.int16Leaf(hn, descAPIVersion); verr == nil {
		f.Version = ver
	}
	if d.r.Remaining() >= 4 {
		_ = d.correlationID(f, hn) // four bytes are there: it cannot fail
	}
	return err
}

// correlationID reads the header's correlation id.
func (d *decoder) correlationID(f *Frame, hn span.ID) error {
	r := &d.r
	off := r.Off
	ki := 0
	if f.Kind == schema.TypeResponse {
		ki = 1
	}
	cn := d.node(hn, descCorrelation[ki], off, span.CatHeader)
	corr, err := r.Int32()
	if cn != span.None {
		row := &d.t.Nodes[cn]
		row.Len, row.Val, row.Int = int32(r.Off-off), span.ValInt, int64(corr)
	}
	if err != nil {
		return within(d.fail(cn, off, fmt.Errorf("%w: correlation_id", err)), "correlation_id", -1)
	}
	f.CorrelationID = corr
	return nil
}

// clientID reads the request header's client id: always an int16-prefixed
// nullable string, even in flexible headers.
func (d *decoder) clientID(f *Frame, hn span.ID) error {
	r := &d.r
	off := r.Off
	n, err := r.Int16()
	cn := d.node(hn, descClientID, off, span.CatHeader)
	if cn != span.None {
		row := &d.t.Nodes[cn]
		row.Len = int32(r.Off - off)
		row.Val, row.Enc, row.Prefix = span.ValString, span.EncInt16, int64(n)
	}
	if err != nil {
		return within(d.fail(cn, off, fmt.Errorf("%w: client_id length", err)), "client_id", -1)
	}
	switch {
	case n < -1:
		return within(d.fail(cn, off, fmt.Errorf("%w: client_id length %d", wire.ErrNegativeLength, n)), "client_id", -1)
	case n == -1:
		f.ClientIDNull = true
		if cn != span.None {
			d.t.Nodes[cn].Null = true
		}
	default:
		vs := r.Off
		b, err := r.Span(int(n))
		if err != nil {
			return within(d.fail(cn, off, fmt.Errorf("%w: client_id of %d bytes, %d left", wire.ErrTruncated, n, r.Remaining())), "client_id", -1)
		}
		f.ClientID = b
		if cn != span.None {
			row := &d.t.Nodes[cn]
			row.VOff, row.VLen, row.Len = int32(vs), int32(n), int32(r.Off-off)
		}
	}
	return nil
}

// headerTags reads the header's tagged fields: those the header spec p
// defines into out, the others into f.HeaderTags. p is nil without a
// header spec.
func (d *decoder) headerTags(f *Frame, p *plan, out *Value, hn span.ID) error {
	var tags Value
	if out == nil {
		out = &tags
	}
	if err := d.tags(p, out, hn, descHeaderTagged); err != nil {
		return err
	}
	f.HeaderTags = out.Unknown()
	return nil
}

// PeekRequest reads the API key, version and correlation id of a request
// frame without decoding it. ok is false when b is too short.
func PeekRequest(b []byte) (key, version int16, corr int32, ok bool) {
	return frames.PeekRequest(b)
}

// PeekCorrelationID reads the correlation id of a response frame.
func PeekCorrelationID(b []byte) (int32, bool) { return frames.PeekResponse(b) }
