package codec_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// headerV3 is a synthetic spec set whose request header v3 adds a uuid
// (InstanceId) and a tagged string (Trace, tag 0), used by OffsetPurge v1.
const headerV3 = "../../testdata/specs/headerv3"

func loadHeaderV3(t *testing.T) (*codec.Codec, *schema.API) {
	t.Helper()
	reg, err := schema.Load(headerV3)
	if err != nil {
		t.Fatal(err)
	}
	api, ok := reg.APIByName("OffsetPurge")
	if !ok {
		t.Fatal("no OffsetPurge")
	}
	return codec.New(reg), api
}

// purgeBody is GroupId "g", Topics [{Name "t", Partitions [3]}].
func purgeBody(t *testing.T, api *schema.API) codec.Value {
	topic := api.Request.Body.Fields[1].Type.Elem.Struct
	return etStruct(t, api.Request.Body, "GroupId", etS("g"),
		"Topics", etA(etStruct(t, topic, "Name", etS("t"), "Partitions", etA(etI(3)))))
}

// headerValue is the RequestHeader value with InstanceId and Trace set.
func headerValue(t *testing.T, c *codec.Codec, trace string) codec.Value {
	h := c.Reg.RequestHeader.Body
	v := etStruct(t, h, "InstanceId", codec.BytesValue(etUUID))
	if trace != "" {
		v.Kids()[etFieldOf(t, h, "Trace").Index] = etS(trace)
	}
	return v
}

// TestHeaderV3Encode checks the bytes of a request whose header version
// (3, from headerVersions) adds fields, against hand-computed expectations.
func TestHeaderV3Encode(t *testing.T) {
	c, api := loadHeaderV3(t)
	cases := []struct {
		name  string
		frame *codec.Frame
		want  string
	}{
		{"v1, header v3 with InstanceId and Trace",
			&codec.Frame{Kind: schema.TypeRequest, API: api, Version: 1, CorrelationID: 7, ClientID: []byte("ab"),
				Header: headerValue(t, c, "tr"), Body: purgeBody(t, api)},
			"00 00 00 2e | 07 ff | 00 01 | 00 00 00 07 | 00 02 61 62" + // size 46, key 2047, v1, corr 7, client_id "ab"
				"| 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff" + // instance_id
				"| 01 | 00 03 03 74 72" + // one header tag: tag 0, 3 bytes: compact "tr"
				"| 02 67 | 02 | 02 74 | 02 00 00 00 03 | 00 | 00"}, // group "g", 1 topic "t", [3], tags
		{"v1, header v3 at its defaults",
			&codec.Frame{Kind: schema.TypeRequest, API: api, Version: 1, CorrelationID: 7, ClientID: []byte("ab"), Body: purgeBody(t, api)},
			"00 00 00 29 | 07 ff | 00 01 | 00 00 00 07 | 00 02 61 62" +
				"| 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 | 00" + // zero uuid, no header tags: size 41
				"| 02 67 | 02 | 02 74 | 02 00 00 00 03 | 00 | 00"},
		{"v0, header v1",
			&codec.Frame{Kind: schema.TypeRequest, API: api, Version: 0, CorrelationID: 7, ClientID: []byte("ab"), Body: purgeBody(t, api)},
			"00 00 00 1e | 07 ff | 00 00 | 00 00 00 07 | 00 02 61 62" + // size 30: header 12, body 18
				"| 00 01 67 | 00 00 00 01 | 00 01 74 | 00 00 00 01 00 00 00 03"},
		{"response v1, header v1",
			&codec.Frame{Kind: schema.TypeResponse, API: api, Version: 1, CorrelationID: 7, Body: etStruct(t, api.Response.Body, "ErrorCode", etI(5))},
			"00 00 00 0c | 00 00 00 07 | 00 | 00 05 | 00 00 00 00 | 00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []byte
			var err error
			if tc.frame.Kind == schema.TypeResponse {
				got, err = c.EncodeResponse(nil, tc.frame)
			} else {
				got, err = c.EncodeRequest(nil, tc.frame)
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := etHex(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("encoded\n %x\nwant\n %x", got, want)
			}
		})
	}
	// A header field that header v1 does not have cannot be written at v0.
	f := &codec.Frame{Kind: schema.TypeRequest, API: api, Version: 0, Header: headerValue(t, c, ""), Body: purgeBody(t, api)}
	if _, err := c.EncodeRequest(nil, f); !errors.Is(err, codec.ErrNonDefault) || !strings.Contains(err.Error(), "header.instance_id") {
		t.Errorf("InstanceId at header v1: err = %v", err)
	}
}

// TestHeaderV3Decode decodes the header v3 request: the new fields are
// read into Frame.Header and shown in the tree, whose leaves tile the
// frame; re-encoding gives the same bytes.
func TestHeaderV3Decode(t *testing.T) {
	c, api := loadHeaderV3(t)
	in, err := c.EncodeRequest(nil, &codec.Frame{Kind: schema.TypeRequest, API: api, Version: 1, CorrelationID: 7,
		ClientID: []byte("ab"), Header: headerValue(t, c, "tr"), Body: purgeBody(t, api)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.DecodeRequest(in, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.HeaderVersion != 3 || f.CorrelationID != 7 || string(f.ClientID) != "ab" || len(f.HeaderTags) != 0 {
		t.Errorf("frame: header v%d, corr %d, client %q, %d unknown tags", f.HeaderVersion, f.CorrelationID, f.ClientID, len(f.HeaderTags))
	}
	h := c.Reg.RequestHeader.Body
	if got := f.Header.Kids()[etFieldOf(t, h, "InstanceId").Index].Bytes(); !bytes.Equal(got, etUUID) {
		t.Errorf("InstanceId = %x", got)
	}
	if got := f.Header.Kids()[etFieldOf(t, h, "Trace").Index].Bytes(); string(got) != "tr" {
		t.Errorf("Trace = %q", got)
	}
	tr := f.SpanTree()
	if probs := checkTree(tr, len(in)); len(probs) > 0 {
		t.Errorf("tree does not tile:\n%s", strings.Join(probs, "\n"))
	}
	if probs := checkCategories(tr, schema.TypeRequest); len(probs) > 0 {
		t.Errorf("categories:\n%s", strings.Join(probs, "\n"))
	}
	hn := tr.Kids(tr.Root())[1]
	var names []string
	hk := tr.Kids(hn)
	for _, k := range hk {
		names = append(names, tr.Name(k))
	}
	if got := strings.Join(names, " "); got != "request_api_key request_api_version correlation_id client_id instance_id tagged_fields" {
		t.Fatalf("header nodes: %s", got)
	}
	id := hk[4]
	if n := tr.N(id); n.Off != 16 || n.Len != 16 || tr.Type(id) != "uuid" || n.Cat != span.CatHeader || tr.ValueText(id) != "= 00112233-4455-6677-8899-aabbccddeeff" {
		t.Errorf("instance_id node: [%d, %d] %s %v %q", n.Off, n.Len, tr.Type(id), n.Cat, tr.ValueText(id))
	}
	if tags := tr.Kids(hk[5]); len(tags) != 2 || tr.Name(tags[1]) != "Trace" {
		t.Errorf("header tags: %d children", len(tags))
	}
	out, err := c.EncodeRequest(nil, f)
	if err != nil || !bytes.Equal(out, in) {
		t.Errorf("re-encoded %x (%v), want %x", out, err, in)
	}

	// Cut inside the instance id: the error names the header field and
	// its offset, and the partial tree still tiles.
	cut := append([]byte{}, in[:20]...)
	cut[3] = 16
	f, err = c.DecodeRequest(cut, codec.Options{Spans: true})
	var de *wire.DecodeError
	if !errors.As(err, &de) || de.Offset != 16 || de.Path != "RequestHeader.instance_id" {
		t.Fatalf("truncated instance_id: err = %v", err)
	}
	if probs := etTiles(f.SpanTree(), len(cut)); len(probs) > 0 {
		t.Errorf("partial tree does not tile:\n%s", strings.Join(probs, "\n"))
	}
}

// TestHeaderV3EveryCut cuts the header v3 request at every byte (the size
// prefix patched to match): each cut is an error at an offset inside the
// frame, and the partial tree tiles what there is.
func TestHeaderV3EveryCut(t *testing.T) {
	c, api := loadHeaderV3(t)
	in, err := c.EncodeRequest(nil, &codec.Frame{Kind: schema.TypeRequest, API: api, Version: 1, CorrelationID: 7,
		ClientID: []byte("ab"), Header: headerValue(t, c, "tr"), Body: purgeBody(t, api)})
	if err != nil {
		t.Fatal(err)
	}
	for cut := 4; cut < len(in); cut++ {
		b := append([]byte{}, in[:cut]...)
		b[0], b[1], b[2], b[3] = 0, 0, 0, byte(cut-4)
		f, err := c.DecodeRequest(b, codec.Options{Spans: true})
		var de *wire.DecodeError
		if !errors.As(err, &de) || de.Offset < 4 || de.Offset > cut {
			t.Errorf("cut at %d: err = %v", cut, err)
			continue
		}
		if probs := etTiles(f.SpanTree(), cut); len(probs) > 0 {
			t.Errorf("cut at %d: %s", cut, strings.Join(probs, "; "))
		}
	}
}

// TestHeaderV3NewerThanSpec: a request at a version newer than the spec
// (OffsetPurge v2) still has its whole header read, from the header
// version the open-ended last range gives (v3), before the version error.
func TestHeaderV3NewerThanSpec(t *testing.T) {
	c, api := loadHeaderV3(t)
	in, err := c.EncodeRequest(nil, &codec.Frame{Kind: schema.TypeRequest, API: api, Version: 1, CorrelationID: 7,
		ClientID: []byte("ab"), Header: headerValue(t, c, ""), Body: purgeBody(t, api)})
	if err != nil {
		t.Fatal(err)
	}
	in[7] = 2 // request_api_version 2
	f, err := c.DecodeRequest(in, codec.Options{Spans: true})
	if !errors.Is(err, wire.ErrVersion) || f.HeaderVersion != 3 || f.CorrelationID != 7 {
		t.Fatalf("err = %v, header v%d, corr %d", err, f.HeaderVersion, f.CorrelationID)
	}
	if got := f.Header.Kids()[etFieldOf(t, c.Reg.RequestHeader.Body, "InstanceId").Index].Bytes(); !bytes.Equal(got, etUUID) {
		t.Errorf("InstanceId = %x", got)
	}
}
