package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// TestUnknownAPIOneSentinel checks that an unknown API is one error
// whichever layer finds it: the registry's lookup by name or key, the
// request decoder (a key the spec does not define), the response decoder
// (no API given) and the encoders (no API) all wrap schema.ErrUnknownAPI,
// which codec.ErrUnknownAPI is, and keep their texts.
func TestUnknownAPIOneSentinel(t *testing.T) {
	if ErrUnknownAPI != schema.ErrUnknownAPI {
		t.Fatal("codec.ErrUnknownAPI is not schema.ErrUnknownAPI")
	}
	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg)
	// A request frame: size, key 999, version 0, correlation id, null
	// client id.
	req := binary.BigEndian.AppendUint32(nil, 10)
	req = binary.BigEndian.AppendUint16(req, 999)
	req = append(req, 0, 0, 0, 0, 0, 7, 0xff, 0xff)
	_, decErr := c.DecodeRequest(req, Options{})
	_, respErr := c.DecodeResponse([]byte{0, 0, 0, 4, 0, 0, 0, 7}, nil, 0, Options{})
	_, encReqErr := c.EncodeRequest(nil, &Frame{})
	_, encRespErr := c.EncodeResponse(nil, &Frame{})
	_, byName := reg.Lookup("NoSuchThing")
	_, byKey := reg.Lookup("999")
	for _, tc := range []struct {
		name string
		err  error
		text string
	}{
		{"lookup by name", byName, `unknown API "NoSuchThing"`},
		{"lookup by key", byKey, "unknown API: no API has key 999"},
		{"request with an unknown key", decErr, "unknown API key 999"},
		{"response without its API", respErr, "unknown API key: a response needs its API and version"},
		{"encode a request without its API", encReqErr, "encode: unknown API key"},
		{"encode a response without its API", encRespErr, "encode: unknown API key"},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !errors.Is(tc.err, schema.ErrUnknownAPI) || !errors.Is(tc.err, ErrUnknownAPI) {
			t.Errorf("%s: %v does not match the unknown-API sentinel", tc.name, tc.err)
		}
		if errors.Is(tc.err, wire.ErrVersion) {
			t.Errorf("%s: %v matches ErrVersion too", tc.name, tc.err)
		}
		if !strings.Contains(tc.err.Error(), tc.text) {
			t.Errorf("%s: %q does not say %q", tc.name, tc.err, tc.text)
		}
	}
	var de *wire.DecodeError
	if !errors.As(decErr, &de) || de.Offset != 4 {
		t.Errorf("request with an unknown key: %v is not a decode error at offset 4", decErr)
	}
}

// TestUnknownAPIRequestHeader: a request whose API key the spec does not
// have (a client newer than the spec) fails at its key, but the version
// and the correlation id, which every request header version carries
// right after the key, are read when their bytes are there: the frame
// says its version, can be paired with its response, and its tree shows
// the three leaves at their offsets, under a header node that names no
// header version (it is not known). The rest stays undecoded.
func TestUnknownAPIRequestHeader(t *testing.T) {
	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg)
	frame := func(body ...byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		return append(b, body...)
	}
	for _, tc := range []struct {
		name      string
		in        []byte
		version   int16
		corr      int32
		leaves    []string // the header's leaves, name@offset
		undecoded int      // the bytes left undecoded
	}{
		{"whole header", frame(0x03, 0xe7, 0, 3, 0, 0, 0, 7, 0xff, 0xff, 0), 3, 7,
			[]string{"request_api_key@4", "request_api_version@6", "correlation_id@8"}, 3},
		{"no correlation id", frame(0x03, 0xe7, 0, 3, 0, 0), 3, 0,
			[]string{"request_api_key@4", "request_api_version@6"}, 2},
		{"key alone", frame(0x03, 0xe7, 0), 0, 0,
			[]string{"request_api_key@4"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := c.DecodeRequest(tc.in, Options{Spans: true})
			var de *wire.DecodeError
			if !errors.Is(err, ErrUnknownAPI) || !errors.As(err, &de) || de.Offset != 4 {
				t.Fatalf("error %v, want the unknown API key at offset 4", err)
			}
			if f == nil || f.API != nil || f.Version != tc.version || f.CorrelationID != tc.corr {
				t.Fatalf("frame %+v, want no API, version %d, correlation id %d", f, tc.version, tc.corr)
			}
			tr := f.SpanTree()
			var header span.ID = span.None
			undecoded := -1
			for _, id := range tr.Kids(tr.Root()) {
				switch tr.Name(id) {
				case "RequestHeader":
					header = id
				case "undecoded":
					undecoded = int(tr.N(id).Len)
				}
			}
			if header == span.None {
				t.Fatal("no header node")
			}
			if typ := tr.Type(header); typ != "" {
				t.Errorf("header node type %q, want none (the header version is not known)", typ)
			}
			var leaves []string
			for _, id := range tr.Kids(header) {
				leaves = append(leaves, fmt.Sprintf("%s@%d", tr.Name(id), tr.N(id).Off))
			}
			if !slices.Equal(leaves, tc.leaves) {
				t.Errorf("header leaves %v, want %v", leaves, tc.leaves)
			}
			if undecoded != tc.undecoded {
				t.Errorf("%d bytes undecoded, want %d", undecoded, tc.undecoded)
			}
		})
	}
}
