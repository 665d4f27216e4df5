package frameflow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/wire"
)

func newCodec(t *testing.T) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(reg)
}

func heartbeatAPI(t *testing.T, c *codec.Codec) *schema.API {
	t.Helper()
	api, ok := c.Reg.API(12)
	if !ok {
		t.Fatal("no Heartbeat in the spec")
	}
	return api
}

// TestEncodeMatchesKmsg encodes a request and a response from JSON and
// compares the bytes with kmsg's, an independent encoder.
func TestEncodeMatchesKmsg(t *testing.T) {
	c := newCodec(t)
	api := heartbeatAPI(t, c)
	id := "client-1"
	got, err := Encode(c, Message{Kind: schema.TypeRequest, API: api, Version: 4, CorrelationID: 7, ClientID: &id,
		Body: []byte(`{"GroupId": "g", "GenerationId": 3, "MemberId": "m", "GroupInstanceId": null}`)})
	if err != nil {
		t.Fatal(err)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.Generation, hb.MemberID = 4, "g", 3, "m"
	want := kmsg.NewRequestFormatter(kmsg.FormatterClientID(id)).AppendRequest(nil, hb, 7)
	if !bytes.Equal(got, want) {
		t.Errorf("request\n got % x\nwant % x", got, want)
	}

	got, err = Encode(c, Message{Kind: schema.TypeResponse, API: api, Version: 4, CorrelationID: 7,
		Body: []byte(`{"ThrottleTimeMs": 5, "ErrorCode": 27}`)})
	if err != nil {
		t.Fatal(err)
	}
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version, hbr.ThrottleMillis, hbr.ErrorCode = 4, 5, 27
	w := binary.BigEndian.AppendUint32(make([]byte, 4), 7)
	w = append(w, 0) // the flexible response header's empty tags
	w = hbr.AppendTo(w)
	binary.BigEndian.PutUint32(w, uint32(len(w)-4))
	if !bytes.Equal(got, w) {
		t.Errorf("response\n got % x\nwant % x", got, w)
	}

	// A null client id.
	got, err = Encode(c, Message{Kind: schema.TypeRequest, API: api, Version: 4, CorrelationID: 7,
		Body: []byte(`{"GroupId": "g", "GenerationId": 3, "MemberId": "m", "GroupInstanceId": null}`)})
	if err != nil {
		t.Fatal(err)
	}
	if cid := got[12:14]; !bytes.Equal(cid, []byte{0xff, 0xff}) {
		t.Errorf("null client id encoded as % x", cid)
	}
}

// TestEncodeErrorsNameTheMessage: a bad body names the message and
// version.
func TestEncodeErrorsNameTheMessage(t *testing.T) {
	c := newCodec(t)
	api := heartbeatAPI(t, c)
	_, err := Encode(c, Message{Kind: schema.TypeRequest, API: api, Version: 4, Body: []byte(`{"GenerationId": "three"}`)})
	if err == nil || !strings.HasPrefix(err.Error(), "HeartbeatRequest v4: ") {
		t.Errorf("error %v, want one naming HeartbeatRequest v4", err)
	}
}

// TestOptionsDecodeTheEncoding decodes an encoded response with Options.
func TestOptionsDecodeTheEncoding(t *testing.T) {
	c := newCodec(t)
	m := Message{Kind: schema.TypeResponse, API: heartbeatAPI(t, c), Version: 4, CorrelationID: 9, Body: []byte(`{"ThrottleTimeMs": 0, "ErrorCode": 0}`)}
	b, err := Encode(c, m)
	if err != nil {
		t.Fatal(err)
	}
	o := m.Options(report.Options{Roundtrip: true})
	if o.Kind != schema.TypeResponse || o.API != m.API || o.Version != 4 || !o.Roundtrip {
		t.Fatalf("options %+v", o)
	}
	r := report.Decode(c, b, o)
	if !r.OK() || r.CorrelationID != 9 || r.APIKey != 12 {
		t.Errorf("report %+v", r)
	}
	if q := (&Message{Kind: schema.TypeRequest, API: m.API}).Options(report.Options{}); q.API != nil {
		t.Error("request options name the API: requests name it themselves")
	}
}

// TestSplit keeps the pieces of frames.Split, except one whole frame
// followed by bytes that are not one, which is one piece.
func TestSplit(t *testing.T) {
	frame := []byte{0, 0, 0, 2, 0xaa, 0xbb}
	two := append(append([]byte(nil), frame...), frame...)
	if p := Split(two); len(p) != 2 || p[1].Offset != 6 || p[0].Err != nil || p[1].Err != nil {
		t.Errorf("two frames: %+v", p)
	}
	long := append(append([]byte(nil), frame...), 0xcc) // size prefix one short
	if p := Split(long); len(p) != 1 || p[0].Err != nil || !bytes.Equal(p[0].Bytes, long) {
		t.Errorf("one frame and a byte: %+v", p)
	}
	three := append(append([]byte(nil), two...), 0xcc)
	if p := Split(three); len(p) != 3 || !errors.Is(p[2].Err, wire.ErrFrameSize) {
		t.Errorf("two frames and a byte: %+v", p)
	}
}

// TestDecodePlaces sets index and offset and the split's error.
func TestDecodePlaces(t *testing.T) {
	pieces := Split([]byte{0, 0, 0, 1, 0xaa, 0, 0, 0, 1, 0xbb, 0, 9})
	var seen [][]byte
	dec := func(b []byte) *report.Frame { seen = append(seen, b); return &report.Frame{} }
	var rs []*report.Frame
	for i, p := range pieces {
		rs = append(rs, Decode(i, p, dec))
	}
	if len(rs) != 3 || rs[2].Index != 2 || rs[2].Offset != 10 || rs[1].Offset != 5 || rs[1].Error != "" {
		t.Fatalf("reports %+v", rs)
	}
	if !strings.Contains(rs[2].Error, "size prefix") {
		t.Errorf("cut piece's error %q", rs[2].Error)
	}
	if !bytes.Equal(seen[1], []byte{0, 0, 0, 1, 0xbb}) {
		t.Errorf("decoded % x", seen[1])
	}
	// The decode's own error wins over the split's.
	r := Decode(0, pieces[2], func([]byte) *report.Frame { return &report.Frame{Error: "own"} })
	if r.Error != "own" {
		t.Errorf("error %q", r.Error)
	}
}

// TestAllIsSplit: All yields Split's pieces, the same rule included,
// and stops when the caller does.
func TestAllIsSplit(t *testing.T) {
	f := []byte{0, 0, 0, 1, 0xaa}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for name, in := range map[string][]byte{
		"empty": nil, "one": f, "one and a byte": cat(f, []byte{0}), "two": cat(f, f),
		"two and a byte": cat(f, f, []byte{0}), "cut prefix": {0, 0}, "lying size": {0, 0, 0, 9, 1},
		"three": cat(f, f, f),
	} {
		want := frames.Split(in)
		if len(want) == 2 && want[1].Err != nil {
			want = []frames.Frame{{Bytes: in}}
		}
		got := Split(in)
		if len(got) != len(want) {
			t.Errorf("%s: %d pieces, want %d", name, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i].Offset != want[i].Offset || !bytes.Equal(got[i].Bytes, want[i].Bytes) || (got[i].Err == nil) != (want[i].Err == nil) {
				t.Errorf("%s: piece %d %+v, want %+v", name, i, got[i], want[i])
			}
		}
		n := 0
		for range All(in) {
			n++
			break
		}
		if n != min(1, len(want)) {
			t.Errorf("%s: %d pieces after a break", name, n)
		}
	}
}
