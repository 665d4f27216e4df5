package codec_test

// Header versions checked against a running server: franz-go's kfake, on
// 127.0.0.1, reads our request frames with its own header parser and
// answers with its own response framing; our decoder must read every answer
// (ApiVersions with its always-v0 response header included) and write it
// back byte for byte.

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// kfakeAPIs are APIs kfake answers at once for our smallest requests,
// whatever its state: flexible and non-flexible versions of each, and
// ApiVersions, whose response header stays v0 when its body is flexible.
var kfakeAPIs = []string{"ApiVersions", "Metadata", "FindCoordinator", "ListGroups", "DescribeGroups", "DescribeConfigs", "ListOffsets", "OffsetFetch", "DescribeCluster", "CreateTopics"}

func TestKfakeResponseHeaders(t *testing.T) {
	rel := loadRelease(t, kmsgLabel)
	cl, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	defer cl.Close()
	addr := cl.ListenAddrs()[0]

	maxVersions := kfakeVersions(t, rel, addr)
	var checked, flexAPIVersions int
	hv := map[int16]int{} // response header versions seen
	for _, name := range kfakeAPIs {
		api, ok := rel.reg.APIByName(name)
		if !ok {
			t.Fatalf("no %s in %s", name, kmsgLabel)
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			tr := triple{api, v, schema.TypeResponse}
			if mv, ok := maxVersions[api.Key]; !ok || v > mv {
				t.Logf("%s: kfake serves up to v%d", tr, maxVersions[api.Key])
				continue
			}
			f := sample.Frame(api, schema.TypeRequest, v)
			f.CorrelationID = 1000 + int32(v)
			f.ClientID = []byte("manifester-test")
			req, err := rel.c.EncodeRequest(nil, f)
			if err != nil {
				t.Fatalf("%s: encode: %v", tr, err)
			}
			resp, err := roundTripConn(conn, req)
			if err != nil {
				t.Errorf("%s: kfake did not answer: %v", tr, err)
				break
			}
			got, err := rel.c.DecodeResponse(resp, api, v, codec.Options{Spans: true})
			if err != nil {
				t.Errorf("%s: decoding kfake's response: %v\n% x", tr, err, resp)
				continue
			}
			if got.CorrelationID != f.CorrelationID {
				t.Errorf("%s: correlation id %d, sent %d", tr, got.CorrelationID, f.CorrelationID)
			}
			for _, p := range checkTree(got.SpanTree(), len(resp)) {
				t.Errorf("%s: spans: %s", tr, p)
			}
			back, err := rel.c.EncodeResponse(nil, got)
			if err != nil || !bytes.Equal(back, resp) {
				t.Errorf("%s: re-encoding kfake's response: %v\n ours % x\nkfake % x", tr, err, back, resp)
			}
			hv[got.HeaderVersion]++
			checked++
			if api.Key == 18 && api.Response.IsFlexible(v) {
				flexAPIVersions++
			}
		}
		conn.Close()
	}
	t.Logf("%d kfake responses decoded and re-encoded; response header versions seen: %v", checked, hv)
	if hv[0] == 0 || hv[1] == 0 {
		t.Errorf("want responses with header v0 and v1, saw %v", hv)
	}
	if flexAPIVersions == 0 {
		t.Errorf("no flexible ApiVersions response (v3+, header v0) was checked")
	}
}

// roundTripConn writes one request frame and reads one response frame.
func roundTripConn(conn net.Conn, req []byte) ([]byte, error) {
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		return nil, io.ErrShortBuffer
	}
	resp := make([]byte, 4+n)
	copy(resp, size[:])
	if _, err := io.ReadFull(conn, resp[4:]); err != nil {
		return nil, err
	}
	return resp, nil
}

// kfakeVersions asks kfake for its ApiVersions (v0, with our encoder) and
// parses the answer with kmsg: the highest version kfake serves, per key.
func kfakeVersions(t *testing.T, rel *release, addr string) map[int16]int16 {
	t.Helper()
	api, _ := rel.reg.APIByName("ApiVersions")
	f := sample.Frame(api, schema.TypeRequest, 0)
	req, err := rel.c.EncodeRequest(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	resp, err := roundTripConn(conn, req)
	if err != nil {
		t.Fatalf("ApiVersions v0: %v", err)
	}
	var av kmsg.ApiVersionsResponse // v0: header is size + correlation id
	if err := av.ReadFrom(resp[8:]); err != nil || av.ErrorCode != 0 {
		t.Fatalf("kmsg cannot read kfake's ApiVersions v0 answer (error code %d): %v", av.ErrorCode, err)
	}
	out := map[int16]int16{}
	for _, k := range av.ApiKeys {
		out[k.ApiKey] = k.MaxVersion
	}
	return out
}
