package codec_test

import (
	"bytes"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// minTriples is a floor on the (api, version, kind) triples of every
// release from 3.9 to 4.3 (3.9 has 646, 4.0 558 after the old versions were
// dropped, 4.3 604), so a spec loader that silently drops APIs cannot make
// these tests vacuous.
const minTriples = 550

// decodeFrame decodes a request or response frame of tr's kind.
func decodeFrame(c *codec.Codec, tr triple, b []byte, opts codec.Options) (*codec.Frame, error) {
	if tr.kind == schema.TypeResponse {
		return c.DecodeResponse(b, tr.api, tr.v, opts)
	}
	return c.DecodeRequest(b, opts)
}

// encodeFrame encodes f as a request or response frame.
func encodeFrame(c *codec.Codec, f *codec.Frame) ([]byte, error) {
	if f.Kind == schema.TypeResponse {
		return c.EncodeResponse(nil, f)
	}
	return c.EncodeRequest(nil, f)
}

// TestRoundTripEveryRelease checks, for every release and every (api,
// version, kind): decode(encode(sample)) is the sample, and
// encode(decode(bytes)) gives the bytes back, both for whole frames and for
// bodies alone, with and without spans.
func TestRoundTripEveryRelease(t *testing.T) {
	for _, label := range releaseLabels(t) {
		t.Run(label, func(t *testing.T) {
			rel := loadRelease(t, label)
			all := triples(rel.reg)
			if len(all) < minTriples {
				t.Fatalf("only %d triples in %s, want at least %d", len(all), label, minTriples)
			}
			for _, tr := range all {
				roundTrip(t, rel.c, tr)
			}
			t.Logf("%s: %d (api, version, kind) triples round-tripped", label, len(all))
		})
	}
}

func roundTrip(t *testing.T, c *codec.Codec, tr triple) {
	t.Helper()
	m := tr.msg()
	want := sample.Body(m, tr.v)

	// Bodies alone.
	body, err := c.EncodeBody(nil, m, tr.v, &want)
	if err != nil {
		t.Errorf("%s: encode body: %v", tr, err)
		return
	}
	for _, spans := range []bool{false, true} {
		got, root, err := c.DecodeBody(m, tr.v, body, codec.Options{Spans: spans})
		if err != nil {
			t.Errorf("%s: decode body (spans %v): %v", tr, spans, err)
			return
		}
		if spans && (root == nil || root.Len() == 0 || int(root.N(0).Len) != len(body)) {
			t.Errorf("%s: body span root does not cover the %d body bytes", tr, len(body))
		}
		if !codec.Equal(&got, &want) {
			t.Errorf("%s: decode(encode(sample)) differs from the sample (spans %v)", tr, spans)
		}
		again, err := c.EncodeBody(nil, m, tr.v, &got)
		if err != nil {
			t.Errorf("%s: re-encode body: %v", tr, err)
			return
		}
		if !bytes.Equal(again, body) {
			t.Errorf("%s: encode(decode(body)) differs:\n got % x\nwant % x", tr, again, body)
		}
	}

	// Whole frames.
	frame, err := sample.Encode(c, tr.api, tr.kind, tr.v)
	if err != nil {
		t.Errorf("%s: encode frame: %v", tr, err)
		return
	}
	if !bytes.HasSuffix(frame, body) {
		t.Errorf("%s: frame does not end with the body", tr)
	}
	f, err := decodeFrame(c, tr, frame, codec.Options{})
	if err != nil {
		t.Errorf("%s: decode frame: %v", tr, err)
		return
	}
	if f.API != tr.api || f.Version != tr.v || f.Kind != tr.kind {
		t.Errorf("%s: decoded frame names %v v%d kind %v", tr, f.API, f.Version, f.Kind)
	}
	if f.Size != len(frame) || f.CorrelationID != 0 || f.HeaderVersion != m.HeaderVersion(tr.v) {
		t.Errorf("%s: frame size %d (want %d), correlation id %d, header v%d (want v%d)",
			tr, f.Size, len(frame), f.CorrelationID, f.HeaderVersion, m.HeaderVersion(tr.v))
	}
	if tr.kind == schema.TypeRequest && f.HeaderVersion >= 1 && (f.ClientIDNull || len(f.ClientID) != 0) {
		t.Errorf("%s: client id %q (null %v), want empty", tr, f.ClientID, f.ClientIDNull)
	}
	if !codec.Equal(&f.Body, &want) {
		t.Errorf("%s: decoded frame body differs from the sample", tr)
	}
	again, err := encodeFrame(c, f)
	if err != nil {
		t.Errorf("%s: re-encode frame: %v", tr, err)
		return
	}
	if !bytes.Equal(again, frame) {
		t.Errorf("%s: encode(decode(frame)) differs:\n got % x\nwant % x", tr, again, frame)
	}
}
