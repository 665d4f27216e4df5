package codec

import (
	"fmt"
	"strconv"

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
	f := &Frame{Kind: kind, API: api, Version: version, in: b, reg: c.Reg}
	var root *span.Node
	if d.b != nil {
		name := "Request"
		if kind == schema.TypeResponse {
			name = "Response"
			if api != nil {
				name = api.Response.Name
			}
		}
		root = d.b.New(nil, name, "message", 0, span.CatNone)
		f.Root = root
	}
	err := d.frame(f, root)
	d.done()
	f.Size = d.r.Off
	if root != nil {
		root.Len = d.r.Off
		if f.API != nil {
			root.Name = f.Message().Name
			root.Type = "message v" + strconv.Itoa(int(f.Version))
		}
		if err != nil {
			finish(root, len(b), err)
		}
	}
	return f, err
}

func (d *decoder) frame(f *Frame, root *span.Node) error {
	r := &d.r
	total := len(r.B)
	var fn, sn *span.Node
	if d.b != nil {
		fn = d.b.New(root, "Frame", "", 0, span.CatFrame)
		fn.About = "length-delimited framing"
		sn = d.b.New(fn, "size", "int32", 0, span.CatFrame)
		sn.About = "number of bytes that follow, patched after encoding"
	}
	d.push("size", -1)
	size, err := r.Int32()
	if err != nil {
		err = d.fail(sn, 0, fmt.Errorf("%w: need 4 bytes for the size prefix, have %d", wire.ErrFrameSize, total))
		d.pop()
		return err
	}
	if sn != nil {
		sn.Val, sn.Int, sn.Len, fn.Len = span.ValInt, int64(size), 4, 4
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
		sizeErr = d.fail(sn, 0, fmt.Errorf("%w: size prefix says %d bytes follow, but %d do (%d bytes after the frame)", wire.ErrFrameSize, size, total-4, total-4-int(size)))
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

func (d *decoder) headerAndBody(f *Frame, root *span.Node) error {
	r := &d.r
	hs := r.Off
	var hn *span.Node
	if d.b != nil {
		name := "RequestHeader"
		if f.Kind == schema.TypeResponse {
			name = "ResponseHeader"
		}
		hn = d.b.New(root, name, "", hs, span.CatHeader)
		hn.About = "common response header"
		if f.Kind == schema.TypeRequest {
			hn.About = "common request header"
		}
	}
	err := d.header(f, hn)
	if err != nil {
		err = within(err, "header", -1)
	}
	if hn != nil {
		hn.Len = r.Off - hs
		hn.Type = "v" + strconv.Itoa(int(f.HeaderVersion))
	}
	if err != nil {
		return err
	}
	m := f.Message()
	p, err := d.c.plan(m, f.Version)
	if err != nil {
		return d.fail(hn, 6, fmt.Errorf("%w: %v", wire.ErrVersion, err))
	}
	bs := r.Off
	var bn *span.Node
	if d.b != nil {
		bn = d.b.New(root, m.Name, "struct", bs, d.bodyCat)
		bn.About = "message body, version " + strconv.Itoa(int(f.Version))
	}
	err = d.structBody(p, &f.Body, bn)
	if err != nil {
		err = within(err, m.Name, -1)
	}
	if bn != nil {
		bn.Len = r.Off - bs
	}
	return err
}

func (d *decoder) header(f *Frame, hn *span.Node) error {
	r := &d.r
	leaf := func(name, typ, about string, off int) *span.Node {
		n := d.node(hn, name, typ, off, span.CatHeader)
		if n != nil {
			n.About, n.Len, n.Val = about, r.Off-off, span.ValInt
		}
		return n
	}
	if f.Kind == schema.TypeRequest {
		off := r.Off
		key, err := r.Int16()
		if err != nil {
			return d.fail(hn, off, fmt.Errorf("%w: request_api_key", err))
		}
		kn := leaf("request_api_key", "int16", "numeric id of the API being invoked", off)
		api, ok := d.c.Reg.API(key)
		if kn != nil {
			kn.Int = int64(key)
			if ok {
				kn.Note = api.Name
			} else {
				kn.Note = "unknown"
			}
		}
		if !ok {
			return d.fail(kn, off, fmt.Errorf("%w %d", wire.ErrUnknownAPI, key))
		}
		f.API = api
		off = r.Off
		ver, err := r.Int16()
		if err != nil {
			return d.fail(hn, off, fmt.Errorf("%w: request_api_version", err))
		}
		vn := leaf("request_api_version", "int16", "version of the API being invoked", off)
		if vn != nil {
			vn.Int = int64(ver)
		}
		f.Version = ver
		var versionErr error
		if !api.Request.Valid.Contains(ver) {
			versionErr = d.fail(vn, off, fmt.Errorf("%w: %s v%d; valid versions are %s", wire.ErrVersion, api.Name, ver, api.Request.Valid))
			if api.Request.Valid.Empty() || ver < api.Request.Valid.Hi {
				return versionErr
			}
			// A version newer than the spec (a client newer than the
			// spec): the rest of the header follows the flexible
			// versions, which are open-ended, so it is read before
			// failing; the body is not.
		}
		f.HeaderVersion = api.Request.HeaderVersion(ver)
		if hp := d.c.headerPlan(schema.TypeRequest, f.HeaderVersion); hp != nil {
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
		return d.fail(hn, 4, fmt.Errorf("%w: a response needs its API and version", wire.ErrUnknownAPI))
	}
	if !f.API.Response.Valid.Contains(f.Version) {
		return d.fail(hn, 4, fmt.Errorf("%w: %s v%d; valid versions are %s", wire.ErrVersion, f.API.Name, f.Version, f.API.Response.Valid))
	}
	f.HeaderVersion = f.API.Response.HeaderVersion(f.Version)
	if hp := d.c.headerPlan(schema.TypeResponse, f.HeaderVersion); hp != nil {
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

// correlationID reads the header's correlation id.
func (d *decoder) correlationID(f *Frame, hn *span.Node) error {
	r := &d.r
	off := r.Off
	corr, err := r.Int32()
	if err != nil {
		return d.fail(hn, off, fmt.Errorf("%w: correlation_id", err))
	}
	f.CorrelationID = corr
	if cn := d.node(hn, "correlation_id", "int32", off, span.CatHeader); cn != nil {
		cn.About, cn.Len, cn.Val, cn.Int = "echoed back by the broker in the response", r.Off-off, span.ValInt, int64(corr)
		if f.Kind == schema.TypeResponse {
			cn.About = "matches the correlation_id of the request"
		}
	}
	return nil
}

// clientID reads the request header's client id: always an int16-prefixed
// nullable string, even in flexible headers.
func (d *decoder) clientID(f *Frame, hn *span.Node) error {
	r := &d.r
	off := r.Off
	n, err := r.Int16()
	cn := d.node(hn, "client_id", "nullable_string", off, span.CatHeader)
	if cn != nil {
		cn.About, cn.Len = "always a non-flexible int16-prefixed string", r.Off-off
		cn.Val, cn.Enc, cn.Prefix = span.ValString, span.EncInt16, int64(n)
	}
	if err != nil {
		return d.fail(cn, off, fmt.Errorf("%w: client_id length", err))
	}
	switch {
	case n < -1:
		return d.fail(cn, off, fmt.Errorf("%w: client_id length %d", wire.ErrNegativeLength, n))
	case n == -1:
		f.ClientIDNull = true
		if cn != nil {
			cn.Null = true
		}
	default:
		b, err := r.Span(int(n))
		if err != nil {
			return d.fail(cn, off, fmt.Errorf("%w: client_id of %d bytes, %d left", wire.ErrTruncated, n, r.Remaining()))
		}
		f.ClientID = b
		if cn != nil {
			cn.Bytes, cn.Len = b, r.Off-off
		}
	}
	return nil
}

// headerTags reads the header's tagged fields: those the header spec p
// defines into out, the others into f.HeaderTags. p is nil without a
// header spec.
func (d *decoder) headerTags(f *Frame, p *plan, out *Value, hn *span.Node) error {
	var tags Value
	if out == nil {
		out = &tags
	}
	if err := d.tags(p, out, hn, "number of tagged fields in the header"); err != nil {
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
