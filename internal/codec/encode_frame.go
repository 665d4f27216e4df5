package codec

import "github.com/manifester/manifester/internal/schema"

// Frame plans: what encoding a request or response frame looks up, found
// by API key and version in a table made once by New, so that a frame
// costs no map lookup (a small frame costs little else). A message the
// table does not hold (another registry's, or a key above maxTableKey)
// takes the general lookups, with the same result.

// maxTableKey bounds the API keys held by the frame-plan table (Kafka's
// run below 100; a crafted spec may use any int16).
const maxTableKey = 1023

// framePlan is what encoding one frame of a message at one version needs.
type framePlan struct {
	body *plan // the body's plan
	hdr  *plan // the header's plan, nil for the built-in header layout
	hv   int16 // the header version
	// hdrOwn is set when the header plan's fields all come from the
	// frame's own (the correlation id and, in requests, the client id,
	// after the API key and version) and none is absent or tagged: the
	// header is then written without its plan when the frame carries no
	// header tags (its header value, if any, holds nothing on the wire).
	hdrOwn bool
}

// msgFramePlans are the frame plans of one message, by version from lo.
type msgFramePlans struct {
	m  *schema.Message
	lo int16
	by []framePlan
}

// buildFramePlans fills c.frames from the plans already built, and
// c.apis.
func (c *Codec) buildFramePlans() {
	for _, m := range c.Reg.Messages {
		if m.APIKey >= 0 && m.APIKey <= maxTableKey {
			if a, ok := c.Reg.API(m.APIKey); ok {
				if int(m.APIKey) >= len(c.apis) {
					c.apis = append(c.apis, make([]*schema.API, int(m.APIKey)+1-len(c.apis))...)
				}
				c.apis[m.APIKey] = a
			}
		}
		t := frameTable(m.Type)
		if t < 0 || m.APIKey < 0 || m.APIKey > maxTableKey {
			continue
		}
		mp := c.plans[m]
		if len(mp.plans) == 0 {
			continue
		}
		if int(m.APIKey) >= len(c.frames[t]) {
			c.frames[t] = append(c.frames[t], make([]msgFramePlans, int(m.APIKey)+1-len(c.frames[t]))...)
		}
		mf := msgFramePlans{m: m, lo: mp.lo, by: make([]framePlan, len(mp.plans))}
		for i, p := range mp.plans {
			hv := m.HeaderVersion(mp.lo + int16(i))
			mf.by[i] = framePlan{body: p, hdr: c.headerPlan(m.Type, hv), hv: hv}
			mf.by[i].hdrOwn = ownHeader(mf.by[i].hdr, m.Type)
		}
		c.frames[t][m.APIKey] = mf
	}
}

// frameTable is the index in c.frames of requests or responses, or -1.
func frameTable(t schema.MessageType) int {
	switch t {
	case schema.TypeRequest:
		return 0
	case schema.TypeResponse:
		return 1
	}
	return -1
}

// framePlanOf returns the frame plan of m at version v, or nil when the
// table does not hold it.
func (c *Codec) framePlanOf(m *schema.Message, t int, v int16) *framePlan {
	tab := c.frames[t]
	if m.APIKey < 0 || int(m.APIKey) >= len(tab) {
		return nil
	}
	mf := &tab[m.APIKey]
	i := int(v) - int(mf.lo)
	if mf.m != m || i < 0 || i >= len(mf.by) {
		return nil
	}
	return &mf.by[i]
}

// api returns the API of key, as [schema.Registry.API] does, from the
// table New made when it holds the key.
func (c *Codec) api(key int16) (*schema.API, bool) {
	if key >= 0 && int(key) < len(c.apis) {
		if a := c.apis[key]; a != nil {
			return a, true
		}
	}
	return c.Reg.API(key)
}

// ownHeader reports whether the header plan hp (of a message of type t)
// has only the fields a frame holds itself: after a request's API key and
// version, the correlation id and, in a request, the client id, with no
// field absent (that must be checked) and none tagged.
func ownHeader(hp *plan, t schema.MessageType) bool {
	if hp == nil || len(hp.enc.mustDefault) != 0 || len(hp.tagged) != 0 {
		return false
	}
	want := []hdrRole{hdrCorrelationID}
	if t == schema.TypeRequest {
		want = []hdrRole{hdrValue, hdrValue, hdrCorrelationID, hdrClientID}
	}
	if len(hp.enc.hdrRoles) != len(want) {
		return false
	}
	for i, r := range want {
		if hp.enc.hdrRoles[i] != r {
			return false
		}
	}
	return true
}

// MinFrameSize returns a lower bound of the size of any frame of message
// m (a request or a response) at version v, its size prefix included: the
// header and the body each at their smallest (every array, string and
// bytes field empty, every nullable struct null, no tagged field): exact,
// except that a struct that contains itself may count for less. ok is
// false when m has no plan at v. Searches that try many schemas on the
// same bytes ([Codec.DecodeResponse] of every API and version) skip those
// whose smallest frame is larger than the bytes.
func (c *Codec) MinFrameSize(m *schema.Message, v int16) (n int, ok bool) {
	fp := c.framePlanOf(m, frameTable(m.Type), v)
	if fp == nil {
		return 0, false
	}
	n = 4 + fp.body.minSize
	switch {
	case fp.hdr != nil:
		n += fp.hdr.minSize
	case m.Type == schema.TypeRequest:
		// The built-in layout: key, version and correlation id, then from
		// v1 the client id, from v2 the tag count.
		n += 8 + 2*min(1, int(max(fp.hv, 0))) + min(1, int(max(fp.hv-1, 0)))
	default:
		// The correlation id, then from v1 the tag count.
		n += 4 + min(1, int(max(fp.hv, 0)))
	}
	return n, true
}
