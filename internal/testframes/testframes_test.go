package testframes

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestResponseHeaders: a flexible response gets the header's empty tag
// section, ApiVersions' does not, a classic one does not; the size prefix
// counts what follows it; kmsg reads the body back.
func TestResponseHeaders(t *testing.T) {
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	old := kmsg.NewPtrMetadataResponse()
	old.Version = 8
	for _, c := range []struct {
		r      kmsg.Response
		header int
	}{{md, 5}, {av, 4}, {old, 4}} {
		b := Response(c.r, 42)
		if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
			t.Errorf("key %d v%d: size %d for %d bytes", c.r.Key(), c.r.GetVersion(), got, len(b)-4)
		}
		if corr := int32(binary.BigEndian.Uint32(b[4:])); corr != 42 {
			t.Errorf("key %d: correlation id %d", c.r.Key(), corr)
		}
		back := kmsg.ResponseForKey(c.r.Key())
		back.SetVersion(c.r.GetVersion())
		if err := back.ReadFrom(b[4+c.header:]); err != nil {
			t.Errorf("key %d v%d: kmsg reads the body back: %v", c.r.Key(), c.r.GetVersion(), err)
		}
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	if b := Request("app", req, 7); !bytes.Contains(b, []byte("app")) || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		t.Errorf("request frame % x", b)
	}
}
