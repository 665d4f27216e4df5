package codec

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/schema"
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
