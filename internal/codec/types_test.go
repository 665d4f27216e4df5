package codec_test

// Unit tests of every field type on the synthetic specs in
// testdata/specs/everytype. The expected bytes are written by hand from
// ../shared/docs/kafka-wire-reference.md (§2 primitives, §3 classic and
// compact lengths, §4 tagged fields, §5 headers), never taken from our
// encoder; each is commented with its readable form.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

const etSpecs = "../../testdata/specs/everytype"

// etFixture is the loaded synthetic spec set.
type etFixture struct {
	reg   *schema.Registry
	c     *codec.Codec
	every *schema.API     // EveryType, key 1000
	plain *schema.API     // Plain, key 1001
	box   *schema.Message // TagBox (data)
}

func etLoad(t *testing.T) *etFixture {
	t.Helper()
	reg, err := schema.Load(etSpecs)
	if err != nil {
		t.Fatalf("loading %s: %v", etSpecs, err)
	}
	f := &etFixture{reg: reg, c: codec.New(reg)}
	var ok bool
	if f.every, ok = reg.API(1000); !ok {
		t.Fatal("no API 1000")
	}
	if f.plain, ok = reg.API(1001); !ok {
		t.Fatal("no API 1001")
	}
	if f.box, ok = reg.Message("TagBox"); !ok {
		t.Fatal("no TagBox")
	}
	return f
}

// etHex decodes hex written with spaces, newlines and "|" separators.
func etHex(t *testing.T, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "|", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func etFieldOf(t *testing.T, s *schema.Struct, name string) *schema.Field {
	t.Helper()
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("struct %s has no field %s", s.Name, name)
	return nil
}

// etStruct returns s with every field at its default, then the given
// name/value pairs set.
func etStruct(t *testing.T, s *schema.Struct, kv ...any) codec.Value {
	t.Helper()
	v := codec.DefaultStruct(s, 0)
	for i := 0; i < len(kv); i += 2 {
		v.Kids()[etFieldOf(t, s, kv[i].(string)).Index] = kv[i+1].(codec.Value)
	}
	return v
}

func etI(n int64) codec.Value          { return codec.IntValue(n) }
func etS(s string) codec.Value         { return codec.BytesValue([]byte(s)) }
func etB(b ...byte) codec.Value        { return codec.BytesValue(append([]byte{}, b...)) }
func etA(e ...codec.Value) codec.Value { return codec.KidsValue(e) }

var etNull = codec.NullValue()

// etUUID is 00112233-4455-6677-8899-aabbccddeeff.
var etUUID = []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}

// etEveryValue is the EveryTypeRequest value the byte vectors below encode.
func etEveryValue(t *testing.T, f *etFixture, v int16) codec.Value {
	t.Helper()
	body := f.every.Request.Body
	sub := func(name string) *schema.Struct { return etFieldOf(t, body, name).Type.ElemStruct() }
	kv := []any{
		"Bool", etI(1),
		"Int8", etI(-1),
		"Int16", etI(-2),
		"Uint16", etI(65535),
		"Int32", etI(-3),
		"Uint32", etI(4294967295),
		"Int64", etI(1),
		"Float64", codec.FloatValue(1.5),
		"Uuid", etB(etUUID...),
		"Str", etS("hi"),
		"NullableStr", etNull,
		"Bytes", etB(0xab),
		"NullableBytes", etNull,
		"Records", etNull,
		"Int32s", etA(etI(1), etI(2)),
		"Strings", etA(etS("a"), etS("")),
		"Uuids", etA(etB(etUUID...)),
		"Items", etA(etStruct(t, sub("Items"), "ItemId", etI(7), "ItemName", etS("x"))),
		"NullableInts", etNull,
		"Opt", etStruct(t, sub("Opt"), "Flag", etI(1)),
		"Common", etStruct(t, sub("Common"), "C", etI(3)),
		"ClassicStr", etS("ab"),
	}
	if v == 0 {
		kv = append(kv, "OldField", etI(9))
	}
	if v >= 1 {
		kv = append(kv,
			"TagInt", etI(0),
			"TagStr", etS("z"),
			"TagStruct", etStruct(t, sub("TagStruct"), "X", etI(9)),
			"TagNullStruct", etStruct(t, sub("TagNullStruct"), "Y", etI(0)),
			"TagArray", etA(etI(1)),
		)
	}
	if v >= 2 {
		kv = append(kv, "V2Only", etI(12))
	}
	return etStruct(t, body, kv...)
}

// etSeg is one top-level field of a hand-written body.
type etSeg struct {
	name string
	hex  string
}

// etEveryV0 is EveryTypeRequest v0: classic encodings, no tagged fields.
var etEveryV0 = []etSeg{
	{"Bool", "01"},                         // true
	{"Int8", "ff"},                         // -1
	{"Int16", "ff fe"},                     // -2
	{"Uint16", "ff ff"},                    // 65535
	{"Int32", "ff ff ff fd"},               // -3
	{"Uint32", "ff ff ff ff"},              // 4294967295
	{"Int64", "00 00 00 00 00 00 00 01"},   // 1
	{"Float64", "3f f8 00 00 00 00 00 00"}, // 1.5
	{"Uuid", "00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"},                // 00112233-4455-6677-8899-aabbccddeeff
	{"Str", "00 02 | 68 69"},                                                   // "hi": int16 len 2
	{"NullableStr", "ff ff"},                                                   // null: int16 -1
	{"Bytes", "00 00 00 01 | ab"},                                              // {ab}: int32 len 1
	{"NullableBytes", "ff ff ff ff"},                                           // null: int32 -1
	{"Records", "ff ff ff ff"},                                                 // null: int32 -1
	{"Int32s", "00 00 00 02 | 00 00 00 01 | 00 00 00 02"},                      // [1, 2]: int32 count 2
	{"Strings", "00 00 00 02 | 00 01 61 | 00 00"},                              // ["a", ""]
	{"Uuids", "00 00 00 01 | 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"}, // [uuid]
	{"Items", "00 00 00 01 | 00 00 00 07 | 00 01 78"},                          // [{ItemId 7, ItemName "x"}]
	{"NullableInts", "ff ff ff ff"},                                            // null: int32 -1
	{"Opt", "01 | 01"},                                                         // present (int8 1), Flag 1
	{"Common", "00 03"},                                                        // {C 3}
	{"OldField", "00 00 00 09"},                                                // 9 (only in v0)
	{"ClassicStr", "00 02 | 61 62"},                                            // "ab": int16 len 2
}

// etEveryV1 is EveryTypeRequest v1: compact lengths (uvarint N+1, 0 =
// null), a tagged-field count after every struct, and the tagged fields.
var etEveryV1 = []etSeg{
	{"Bool", "01"},
	{"Int8", "ff"},
	{"Int16", "ff fe"},
	{"Uint16", "ff ff"},
	{"Int32", "ff ff ff fd"},
	{"Uint32", "ff ff ff ff"},
	{"Int64", "00 00 00 00 00 00 00 01"},
	{"Float64", "3f f8 00 00 00 00 00 00"},
	{"Uuid", "00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"},
	{"Str", "03 | 68 69"},                        // "hi": uvarint 2+1
	{"NullableStr", "00"},                        // null: uvarint 0
	{"Bytes", "02 | ab"},                         // {ab}: uvarint 1+1
	{"NullableBytes", "00"},                      // null
	{"Records", "00"},                            // null
	{"Int32s", "03 | 00 00 00 01 | 00 00 00 02"}, // [1, 2]: uvarint 2+1
	{"Strings", "03 | 02 61 | 01"},               // ["a", ""]
	{"Uuids", "02 | 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"},
	{"Items", "02 | 00 00 00 07 | 02 78 | 00"}, // [{7, "x"}], element ends with 0 tagged fields
	{"NullableInts", "00"},                     // null
	{"Opt", "01 | 01 | 00"},                    // present: int8 1 (not a varint), Flag 1, 0 tags
	{"Common", "00 03 | 00"},                   // {C 3}, 0 tags
	{"ClassicStr", "00 02 | 61 62"},            // "ab": int16 length although v1 is flexible
	{"tagged_fields", `05
		00 04 00 00 00 00
		01 02 02 7a
		02 03 00 09 00
		03 03 01 00 00
		04 05 02 00 00 00 01`},
	// 5 tagged fields, ascending:
	//   tag 0 TagInt = 0, size 4 (written because the default is 5)
	//   tag 1 TagStr = "z", size 2 (compact)
	//   tag 2 TagStruct = {X 9}, size 3 (int16 + its own 0 tag count)
	//   tag 3 TagNullStruct = {Y 0}, size 3: uvarint 1 = present, Y, 0 tags
	//   tag 4 TagArray = [1], size 5 (compact count 2, one int32)
}

// etEveryV2 is v1 with V2Only = 12 after ClassicStr.
func etEveryV2() []etSeg {
	var out []etSeg
	for _, s := range etEveryV1 {
		out = append(out, s)
		if s.name == "ClassicStr" {
			out = append(out, etSeg{"V2Only", "00 0c"})
		}
	}
	return out
}

func etJoin(t *testing.T, segs []etSeg) []byte {
	t.Helper()
	var b []byte
	for _, s := range segs {
		b = append(b, etHex(t, s.hex)...)
	}
	return b
}

// etOff returns the offset of a segment in the joined body.
func etOff(t *testing.T, segs []etSeg, name string) int {
	t.Helper()
	off := 0
	for _, s := range segs {
		if s.name == name {
			return off
		}
		off += len(etHex(t, s.hex))
	}
	t.Fatalf("no segment %s", name)
	return 0
}

// etReplace returns segs with one segment's bytes replaced.
func etReplace(segs []etSeg, name, hex string) []etSeg {
	out := append([]etSeg(nil), segs...)
	for i := range out {
		if out[i].name == name {
			out[i].hex = hex
		}
	}
	return out
}

func etVectors() map[int16][]etSeg {
	return map[int16][]etSeg{0: etEveryV0, 1: etEveryV1, 2: etEveryV2()}
}

// TestEveryTypeEncode: encoding the value gives the hand-written bytes.
func TestEveryTypeEncode(t *testing.T) {
	f := etLoad(t)
	for v, segs := range etVectors() {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			val := etEveryValue(t, f, v)
			got, err := f.c.EncodeBody(nil, f.every.Request, v, &val)
			if err != nil {
				t.Fatal(err)
			}
			if want := etJoin(t, segs); !bytes.Equal(got, want) {
				t.Errorf("encode v%d:\n got %x\nwant %x", v, got, want)
			}
		})
	}
}

// TestEveryTypeDecode: decoding the hand-written bytes gives the value
// back, fields absent at the version hold their defaults, and each
// top-level field's span is where the vector puts it.
func TestEveryTypeDecode(t *testing.T) {
	f := etLoad(t)
	for v, segs := range etVectors() {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			b := etJoin(t, segs)
			got, root, err := f.c.DecodeBody(f.every.Request, v, b, codec.Options{Spans: true})
			if err != nil {
				t.Fatal(err)
			}
			want := etEveryValue(t, f, v)
			if !codec.Equal(&got, &want) {
				t.Errorf("decoded value differs:\n got %+v\nwant %+v", got, want)
			}
			body := f.every.Request.Body
			if v > 0 {
				// OldField exists only in v0: later versions read its default 7.
				if n := got.Kids()[etFieldOf(t, body, "OldField").Index].Int(); n != 7 {
					t.Errorf("OldField = %d, want the default 7", n)
				}
			}
			if v == 0 {
				// Tagged fields are not in v0: TagInt holds its default 5,
				// TagNullStruct its default null.
				if n := got.Kids()[etFieldOf(t, body, "TagInt").Index].Int(); n != 5 {
					t.Errorf("TagInt = %d, want the default 5", n)
				}
				if !got.Kids()[etFieldOf(t, body, "TagNullStruct").Index].IsNull() {
					t.Errorf("TagNullStruct is not null")
				}
			}
			kids := (row{root, root.Root()}).Kids()
			if len(kids) != len(segs) {
				t.Fatalf("root has %d children, vector has %d fields", len(kids), len(segs))
			}
			off := 0
			for i, s := range segs {
				n := len(etHex(t, s.hex))
				k := kids[i]
				if k.Name() != s.name || k.Off() != off || k.Len() != n {
					t.Errorf("child %d = %s [%d,%d], want %s [%d,%d]", i, k.Name(), k.Off(), k.Len(), s.name, off, n)
				}
				off += n
			}
			if problems := etTiles(root, len(b)); len(problems) > 0 {
				t.Errorf("span tree: %s", strings.Join(problems, "; "))
			}
		})
	}
}

// TestEveryTypeSpanValues spot-checks node values against the vector.
func TestEveryTypeSpanValues(t *testing.T) {
	f := etLoad(t)
	b := etJoin(t, etEveryV1)
	_, root, err := f.c.DecodeBody(f.every.Request, 1, b, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Bool":          "= true",
		"Int8":          "= -1",
		"Uint16":        "= 65535",
		"Uint32":        "= 4294967295",
		"Float64":       "= 1.5",
		"Uuid":          "= 00112233-4455-6677-8899-aabbccddeeff",
		"Str":           `= "hi" (compact, len+1=3)`,
		"NullableStr":   "= null (compact, 0)",
		"Bytes":         "= 0xab (compact, len+1=2)",
		"Int32s":        "= 2 elements",
		"Int32s.length": "= 3 (compact, n+1)",
		"Items[0]":      "= struct",
		"NullableInts":  "= null",
		"Opt.presence":  "= 1 (present)",
		"ClassicStr":    `= "ab" (int16 len=2)`,
		"tagged_fields": "= 5",
		"tagged_fields.TagNullStruct.TagNullStruct.presence": "= 1 (present)",
	}
	got := map[string]string{}
	root.Walk(root.Root(), func(id span.ID, _ int) { got[root.Path(id)] = root.ValueText(id) })
	for path, w := range want {
		if g, ok := got[path]; !ok {
			t.Errorf("no node %s", path)
		} else if g != w {
			t.Errorf("%s = %q, want %q", path, g, w)
		}
	}
}

// TestEveryTypeVariants swaps single fields of the vectors for their other
// forms: null structs (int8 -1 in both encodings), non-null nullable
// values, empty arrays and strings.
func TestEveryTypeVariants(t *testing.T) {
	f := etLoad(t)
	body := f.every.Request.Body
	cases := []struct {
		v     int16
		field string
		val   codec.Value
		hex   string
	}{
		{0, "Opt", etNull, "ff"},                                                        // int8 -1
		{1, "Opt", etNull, "ff"},                                                        // still int8 -1 in a flexible version
		{0, "NullableStr", etS("n"), "00 01 6e"},                                        // int16 1, "n"
		{1, "NullableStr", etS(""), "01"},                                               // empty, not null: uvarint 0+1
		{0, "NullableBytes", etB(), "00 00 00 00"},                                      // empty bytes: int32 0
		{1, "NullableBytes", etB(1, 2), "03 01 02"},                                     // uvarint 2+1
		{0, "NullableInts", etA(), "00 00 00 00"},                                       // empty array: int32 0
		{1, "NullableInts", etA(etI(-1)), "02 ff ff ff ff"},                             // [-1]
		{1, "Items", etA(), "01"},                                                       // empty array: uvarint 0+1
		{1, "Str", etS(strings.Repeat("x", 127)), "80 01 " + strings.Repeat("78", 127)}, // len+1 = 128: two-byte uvarint
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("v%d %s", c.v, c.field), func(t *testing.T) {
			val := etEveryValue(t, f, c.v)
			val.Kids()[etFieldOf(t, body, c.field).Index] = c.val
			want := etJoin(t, etReplace(etVectors()[c.v], c.field, c.hex))
			got, err := f.c.EncodeBody(nil, f.every.Request, c.v, &val)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encode:\n got %x\nwant %x", got, want)
			}
			back, root, err := f.c.DecodeBody(f.every.Request, c.v, want, codec.Options{Spans: true})
			if err != nil {
				t.Fatal(err)
			}
			if !codec.Equal(&back, &val) {
				t.Errorf("decoded value differs")
			}
			if problems := etTiles(root, len(want)); len(problems) > 0 {
				t.Errorf("span tree: %s", strings.Join(problems, "; "))
			}
		})
	}
}

// TestTaggedNullStruct: a nullable tagged struct sent as null is tag 3,
// size 1, uvarint 0; the tree shows the wire value of the marker.
func TestTaggedNullStruct(t *testing.T) {
	f := etLoad(t)
	segs := etReplace(etEveryV1, "tagged_fields", "01 | 03 01 00")
	val, root, err := f.c.DecodeBody(f.every.Request, 1, etJoin(t, segs), codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if !val.Kids()[etFieldOf(t, f.every.Request.Body, "TagNullStruct").Index].IsNull() {
		t.Errorf("TagNullStruct is not null")
	}
	found := false
	root.Walk(root.Root(), func(id span.ID, _ int) {
		if p := root.N(id).Parent; root.Name(id) == "presence" && p != span.None && root.Name(p) == "TagNullStruct" {
			found = true
			if got := root.ValueText(id); got != "= 0 (null)" {
				t.Errorf("marker shows %q, want %q", got, "= 0 (null)")
			}
		}
	})
	if !found {
		t.Error("no presence node")
	}
}

// TestEveryTypeRecords encodes a records field holding one empty
// RecordBatch v2, built here from the table in §6.1 (CRC-32C of bytes
// 21..60 computed with hash/crc32, not with our records package).
func TestEveryTypeRecords(t *testing.T) {
	f := etLoad(t)
	batch := make([]byte, 61)
	binary.BigEndian.PutUint32(batch[8:], 49) // batchLength = 61 - 12
	batch[16] = 2                             // magic
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	for v, prefix := range map[int16]string{0: "00 00 00 3d", 1: "3e"} { // int32 61; uvarint 61+1
		segs := etReplace(etVectors()[v], "Records", prefix+hex.EncodeToString(batch))
		val := etEveryValue(t, f, v)
		val.Kids()[etFieldOf(t, f.every.Request.Body, "Records").Index] = codec.BytesValue(batch)
		got, err := f.c.EncodeBody(nil, f.every.Request, v, &val)
		if err != nil {
			t.Fatal(err)
		}
		want := etJoin(t, segs)
		if !bytes.Equal(got, want) {
			t.Errorf("v%d: got %x\nwant %x", v, got, want)
		}
		back, root, err := f.c.DecodeBody(f.every.Request, v, want, codec.Options{Spans: true})
		if err != nil {
			t.Fatalf("v%d decode: %v", v, err)
		}
		if !codec.Equal(&back, &val) {
			t.Errorf("v%d: decoded value differs", v)
		}
		var batches int
		root.Walk(root.Root(), func(id span.ID, _ int) {
			if n := root.N(id); n.Cat == span.CatRecordBatch && root.Name(id) == "RecordBatch" {
				batches++
				if int(n.Off) != etOff(t, segs, "Records")+len(etHex(t, prefix)) || n.Len != 61 {
					t.Errorf("v%d: batch node at [%d,%d]", v, n.Off, n.Len)
				}
			}
		})
		if batches != 1 {
			t.Errorf("v%d: %d RecordBatch nodes, want 1", v, batches)
		}
	}
}

// TestOpaqueRecords: with Options.OpaqueRecords a records field is kept
// as its bytes, its batches neither decoded nor checked: a batch whose
// CRC is wrong fails the ordinary decode and passes this one, its bytes
// in the value and no batch node under the records in the tree.
func TestOpaqueRecords(t *testing.T) {
	f := etLoad(t)
	batch := make([]byte, 61)
	binary.BigEndian.PutUint32(batch[8:], 49) // batchLength = 61 - 12
	batch[16] = 2                             // magic
	binary.BigEndian.PutUint32(batch[17:], 0xdeadbeef)
	const v = 1
	val := etEveryValue(t, f, v)
	recs := etFieldOf(t, f.every.Request.Body, "Records").Index
	val.Kids()[recs] = codec.BytesValue(batch)
	body, err := f.c.EncodeBody(nil, f.every.Request, v, &val)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.c.DecodeBody(f.every.Request, v, body, codec.Options{}); err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Fatalf("decoding a batch with a wrong CRC: err %v, want a CRC error", err)
	}
	for _, spans := range []bool{false, true} {
		back, root, err := f.c.DecodeBody(f.every.Request, v, body, codec.Options{OpaqueRecords: true, Spans: spans})
		if err != nil {
			t.Fatalf("spans=%v: %v", spans, err)
		}
		if !codec.Equal(&back, &val) {
			t.Errorf("spans=%v: decoded value differs", spans)
		}
		if !bytes.Equal(back.Kids()[recs].Bytes(), batch) {
			t.Errorf("spans=%v: records %x, want the batch's bytes", spans, back.Kids()[recs].Bytes())
		}
		if !spans {
			continue
		}
		root.Walk(root.Root(), func(id span.ID, _ int) {
			if n := root.N(id); n.Cat == span.CatRecordBatch {
				t.Errorf("a %s node at [%d,%d]: batches should stay undecoded", root.Name(id), n.Off, n.Len)
			}
		})
	}
}

// TestHeaderVersions: an explicit "headerVersions" key (KIP-1313 style)
// overrides the derived header version; without one it is derived from
// flexibleVersions.
func TestHeaderVersions(t *testing.T) {
	f := etLoad(t)
	cases := []struct {
		m    *schema.Message
		want []int16 // header version at v0, v1, ...
	}{
		{f.every.Request, []int16{2, 2, 2}},  // {"0-1": 2, "2+": "2"}; derived would be 1, 2, 2
		{f.every.Response, []int16{1, 1, 1}}, // 1; derived would be 0, 1, 1
		{f.plain.Request, []int16{1, 2}},     // derived: flexible from 1
		{f.plain.Response, []int16{0, 1}},
	}
	for _, c := range cases {
		for v, want := range c.want {
			if got := c.m.HeaderVersion(int16(v)); got != want {
				t.Errorf("%s v%d: header v%d, want v%d", c.m.Name, v, got, want)
			}
		}
	}
}

// TestFrames checks whole frames (size prefix, header, body) where the
// header version is explicit or derived.
func TestFrames(t *testing.T) {
	f := etLoad(t)
	type frameCase struct {
		name   string
		frame  *codec.Frame
		header string // hand-written header bytes
		body   []byte
		hv     int16
	}
	v1 := etEveryValue(t, f, 1)
	v2 := etEveryValue(t, f, 2)
	plainReq := etStruct(t, f.plain.Request.Body, "A", etI(5))
	plainResp := etStruct(t, f.plain.Response.Body, "B", etI(6))
	everyResp := etStruct(t, f.every.Response.Body, "ThrottleTimeMs", etI(1), "ErrorCode", etI(2))
	cases := []frameCase{
		{"EveryType request v1 (explicit header v2)",
			&codec.Frame{Kind: schema.TypeRequest, API: f.every, Version: 1, CorrelationID: 42, ClientID: []byte("c"), Body: v1},
			"03 e8 | 00 01 | 00 00 00 2a | 00 01 63 | 00", // key 1000, v1, corr 42, client_id "c"; 0 header tags
			etJoin(t, etEveryV1), 2},
		{"EveryType request v2 (explicit header v2)",
			&codec.Frame{Kind: schema.TypeRequest, API: f.every, Version: 2, CorrelationID: 42, ClientIDNull: true, Body: v2},
			"03 e8 | 00 02 | 00 00 00 2a | ff ff | 00", // client_id null; 0 header tags
			etJoin(t, etEveryV2()), 2},
		{"EveryType response v1 (explicit header v1)",
			&codec.Frame{Kind: schema.TypeResponse, API: f.every, Version: 1, CorrelationID: 7, Body: everyResp},
			"00 00 00 07 | 00",                       // correlation id, 0 header tags
			etHex(t, "00 00 00 01 | 00 02 | 00"), 1}, // throttle 1, error 2, 0 tags
		{"Plain request v0 (derived header v1)",
			&codec.Frame{Kind: schema.TypeRequest, API: f.plain, Version: 0, CorrelationID: 1, ClientID: []byte{}, Body: plainReq},
			"03 e9 | 00 00 | 00 00 00 01 | 00 00",
			etHex(t, "05"), 1},
		{"Plain request v1 (derived header v2)",
			&codec.Frame{Kind: schema.TypeRequest, API: f.plain, Version: 1, CorrelationID: 1, ClientID: []byte{}, Body: plainReq},
			"03 e9 | 00 01 | 00 00 00 01 | 00 00 | 00",
			etHex(t, "05 00"), 2},
		{"Plain response v0 (derived header v0)",
			&codec.Frame{Kind: schema.TypeResponse, API: f.plain, Version: 0, CorrelationID: 1, Body: plainResp},
			"00 00 00 01", etHex(t, "06"), 0},
		{"Plain response v1 (derived header v1)",
			&codec.Frame{Kind: schema.TypeResponse, API: f.plain, Version: 1, CorrelationID: 1, Body: plainResp},
			"00 00 00 01 | 00", etHex(t, "06 00"), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rest := append(etHex(t, c.header), c.body...)
			want := binary.BigEndian.AppendUint32(nil, uint32(len(rest)))
			want = append(want, rest...)
			var got []byte
			var err error
			if c.frame.Kind == schema.TypeRequest {
				got, err = f.c.EncodeRequest(nil, c.frame)
			} else {
				got, err = f.c.EncodeResponse(nil, c.frame)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got %x\nwant %x", got, want)
			}
			var back *codec.Frame
			if c.frame.Kind == schema.TypeRequest {
				back, err = f.c.DecodeRequest(want, codec.Options{Spans: true})
			} else {
				back, err = f.c.DecodeResponse(want, c.frame.API, c.frame.Version, codec.Options{Spans: true})
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if back.HeaderVersion != c.hv {
				t.Errorf("decoded header v%d, want v%d", back.HeaderVersion, c.hv)
			}
			if back.CorrelationID != c.frame.CorrelationID || back.Version != c.frame.Version || back.API != c.frame.API {
				t.Errorf("decoded frame %+v", back)
			}
			if c.frame.Kind == schema.TypeRequest && (back.ClientIDNull != c.frame.ClientIDNull || !bytes.Equal(back.ClientID, c.frame.ClientID)) {
				t.Errorf("client id = %q (null %v), want %q (null %v)", back.ClientID, back.ClientIDNull, c.frame.ClientID, c.frame.ClientIDNull)
			}
			if !codec.Equal(&back.Body, &c.frame.Body) {
				t.Errorf("decoded body differs")
			}
			if back.Size != len(want) {
				t.Errorf("Size = %d, want %d", back.Size, len(want))
			}
			if problems := etTiles(back.SpanTree(), len(want)); len(problems) > 0 {
				t.Errorf("span tree: %s", strings.Join(problems, "; "))
			}
		})
	}
}

// TestTaggedDefaults: a tagged field at its default is not written; any
// other value is, in ascending tag order. TagBox v1 has A int8, then
// T0 int32 (tag 0, default 5) and T1 string (tag 1, default "").
func TestTaggedDefaults(t *testing.T) {
	f := etLoad(t)
	cases := []struct {
		name   string
		t0, t1 codec.Value
		want   string
	}{
		{"both at default", etI(5), etS(""), "01 | 00"},                                // A 1, 0 tags
		{"T0 zero is not its default", etI(0), etS(""), "01 | 01 | 00 04 00 00 00 00"}, // tag 0, size 4, 0
		{"T1 set", etI(5), etS("q"), "01 | 01 | 01 02 02 71"},                          // tag 1, size 2, "q"
		{"both set", etI(-1), etS("q"), "01 | 02 | 00 04 ff ff ff ff | 01 02 02 71"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			val := etStruct(t, f.box.Body, "A", etI(1), "T0", c.t0, "T1", c.t1)
			got, err := f.c.EncodeBody(nil, f.box, 1, &val)
			if err != nil {
				t.Fatal(err)
			}
			want := etHex(t, c.want)
			if !bytes.Equal(got, want) {
				t.Errorf("got %x, want %x", got, want)
			}
			back, _, err := f.c.DecodeBody(f.box, 1, want, codec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !codec.Equal(&back, &val) {
				t.Errorf("decoded %+v, want %+v", back, val)
			}
		})
	}
	// In the non-flexible v0 the tagged fields do not exist: a non-default
	// value there is an error, as in Kafka.
	val := etStruct(t, f.box.Body, "A", etI(1), "T0", etI(6))
	_, err := f.c.EncodeBody(nil, f.box, 0, &val)
	var ee *codec.EncodeError
	if !errors.As(err, &ee) || !errors.Is(err, codec.ErrNonDefault) || ee.Path != "TagBox.T0" {
		t.Errorf("v0 with T0 = 6: err = %v, want an ErrNonDefault EncodeError at TagBox.T0", err)
	}
	// Tagged structs at default (all-default struct; null for a null
	// default) are omitted too: the smallest EveryType v1 body ends with 00.
	every := etStruct(t, f.every.Request.Body)
	b, err := f.c.EncodeBody(nil, f.every.Request, 1, &every)
	if err != nil {
		t.Fatal(err)
	}
	if b[len(b)-1] != 0 {
		t.Errorf("all-default body ends with %02x, want a 0 tag count", b[len(b)-1])
	}
}

// TestUnknownTags: unknown tags are kept as raw bytes on decode and
// re-encoded, merged with the known ones in ascending order.
func TestUnknownTags(t *testing.T) {
	f := etLoad(t)
	in := etHex(t, `01
		03
		00 04 00 00 00 00
		07 01 78
		09 00`) // A 1; 3 tags: T0 = 0, unknown 7 = "x", unknown 9 = empty
	val, root, err := f.c.DecodeBody(f.box, 1, in, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	wantUnknown := []codec.RawTag{{Tag: 7, Data: []byte("x")}, {Tag: 9, Data: []byte{}}}
	if len(val.Unknown()) != 2 || val.Unknown()[0].Tag != 7 || !bytes.Equal(val.Unknown()[0].Data, []byte("x")) || val.Unknown()[1].Tag != 9 || len(val.Unknown()[1].Data) != 0 {
		t.Errorf("Unknown = %+v, want %+v", val.Unknown(), wantUnknown)
	}
	if n := val.Kids()[etFieldOf(t, f.box.Body, "T0").Index].Int(); n != 0 {
		t.Errorf("T0 = %d, want 0", n)
	}
	out, err := f.c.EncodeBody(nil, f.box, 1, &val)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Errorf("re-encoded %x, want %x", out, in)
	}
	var flagged []string
	root.Walk(root.Root(), func(id span.ID, _ int) {
		if fl := root.Flag(id); fl != "" {
			flagged = append(flagged, root.Path(id)+": "+fl)
		}
	})
	if len(flagged) != 2 {
		t.Errorf("flagged nodes = %q, want the two unknown tags", flagged)
	}

	// Unknown tags given out of order, with T1 set: written 1, 4, 8.
	v := etStruct(t, f.box.Body, "A", etI(2), "T1", etS("q"))
	v.SetUnknown([]codec.RawTag{{Tag: 8, Data: []byte{0xaa}}, {Tag: 4, Data: []byte{0xbb, 0xcc}}})
	out, err = f.c.EncodeBody(nil, f.box, 1, &v)
	if err != nil {
		t.Fatal(err)
	}
	if want := etHex(t, "02 | 03 | 01 02 02 71 | 04 02 bb cc | 08 01 aa"); !bytes.Equal(out, want) {
		t.Errorf("merged tags: got %x, want %x", out, want)
	}

	// An unknown tag equal to a known one is refused.
	v.SetUnknown([]codec.RawTag{{Tag: 1, Data: []byte{0x01}}})
	if _, err := f.c.EncodeBody(nil, f.box, 1, &v); !errors.Is(err, codec.ErrDuplicateTag) {
		t.Errorf("unknown tag 1: err = %v, want ErrDuplicateTag", err)
	}
	// An unknown tag given twice is refused, not written twice (a frame
	// Kafka's reader refuses).
	v.SetUnknown([]codec.RawTag{{Tag: 4, Data: []byte{0x01}}, {Tag: 4, Data: []byte{0x02}}})
	if out, err := f.c.EncodeBody(nil, f.box, 1, &v); !errors.Is(err, codec.ErrRepeatedTag) || !strings.Contains(err.Error(), "4") {
		t.Errorf("unknown tag 4 twice: %x, err = %v, want ErrRepeatedTag", out, err)
	}
	// Unknown tags cannot be written in a non-flexible version.
	v0 := etStruct(t, f.box.Body, "A", etI(2))
	v0.SetUnknown([]codec.RawTag{{Tag: 4, Data: []byte{0x01}}})
	if _, err := f.c.EncodeBody(nil, f.box, 0, &v0); !errors.Is(err, codec.ErrTagsNotFlex) {
		t.Errorf("v0 with unknown tags: err = %v, want ErrTagsNotFlex", err)
	}
}

// TestDecodeErrors: each malformed body gives a *wire.DecodeError with the
// offset and path of the bad bytes, the sentinel cause, and a partial span
// tree that still tiles the input with the failing node marked.
func TestDecodeErrors(t *testing.T) {
	f := etLoad(t)
	const m = "EveryTypeRequest."
	type errCase struct {
		name   string
		v      int16
		seg    string // segment to replace
		hex    string // its new bytes
		suffix string // bytes appended to the body
		at     string // segment the error offset is relative to
		delta  int    // offset within that segment
		path   string
		is     error
	}
	cases := []errCase{
		{"negative string length", 0, "Str", "ff fe", "", "Str", 0, m + "Str", wire.ErrNegativeLength},
		{"negative bytes length", 0, "Bytes", "ff ff ff fe", "", "Bytes", 0, m + "Bytes", wire.ErrNegativeLength},
		{"negative records length", 0, "Records", "80 00 00 00", "", "Records", 0, m + "Records", wire.ErrNegativeLength},
		{"negative array count", 0, "Int32s", "ff ff ff fe", "", "Int32s", 0, m + "Int32s", wire.ErrNegativeLength},
		{"null string (compact)", 1, "Str", "00", "", "Str", 0, m + "Str", wire.ErrNull},
		{"null string (classic)", 0, "Str", "ff ff", "", "Str", 0, m + "Str", wire.ErrNull},
		{"null bytes", 0, "Bytes", "ff ff ff ff", "", "Bytes", 0, m + "Bytes", wire.ErrNull},
		{"null array", 1, "Items", "00", "", "Items", 0, m + "Items", wire.ErrNull},
		{"null string in an array element", 1, "Items", "02 | 00 00 00 07 | 00 | 00", "", "Items", 5, m + "Items[0].ItemName", wire.ErrNull},
		{"null classic-override string", 1, "ClassicStr", "ff ff", "", "ClassicStr", 0, m + "ClassicStr", wire.ErrNull},
		{"array count too large (compact)", 1, "Int32s", "ff ff ff 07", "", "Int32s", 0, m + "Int32s", wire.ErrCountTooLarge},
		{"array count too large (classic)", 0, "Strings", "7f ff ff ff", "", "Strings", 0, m + "Strings", wire.ErrCountTooLarge},
		{"string longer than the body", 1, "Str", "7f | 68 69", "", "Str", 0, m + "Str", wire.ErrTruncated},
		{"varint of more than 5 bytes", 1, "Str", "ff ff ff ff ff 01", "", "Str", 0, m + "Str", wire.ErrVarint},
		{"tags out of order", 1, "tagged_fields", "02 | 02 03 00 09 00 | 00 04 00 00 00 00", "", "tagged_fields", 6, m + "tagged_fields", wire.ErrTagOrder},
		{"duplicate tag", 1, "tagged_fields", "02 | 00 04 00 00 00 00 | 00 04 00 00 00 01", "", "tagged_fields", 7, m + "tagged_fields", wire.ErrTagOrder},
		{"tag size larger than its value", 1, "tagged_fields", "01 | 00 05 00 00 00 00 ff", "", "tagged_fields", 3, m + "tagged_fields.TagInt", wire.ErrTagSize},
		{"tag size smaller than its value", 1, "tagged_fields", "01 | 00 03 00 00 00 | 00", "", "tagged_fields", 3, m + "tagged_fields.TagInt.TagInt", wire.ErrTruncated},
		{"tag size beyond the body", 1, "tagged_fields", "01 | 00 09 00 00 00 00", "", "tagged_fields", 2, m + "tagged_fields", wire.ErrTruncated},
		{"tag not valid at this version", 1, "tagged_fields", "01 | 05 01 00", "", "tagged_fields", 1, m + "tagged_fields", wire.ErrTagVersion},
		{"tag count too large", 1, "tagged_fields", "7f", "", "tagged_fields", 0, m + "tagged_fields", wire.ErrCountTooLarge},
		{"trailing bytes (v0)", 0, "", "", "00", "", -1, "EveryTypeRequest", wire.ErrTrailing},
		{"trailing bytes (v1)", 1, "", "", "00 00", "", -1, "EveryTypeRequest", wire.ErrTrailing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			segs := etVectors()[c.v]
			if c.seg != "" {
				segs = etReplace(segs, c.seg, c.hex)
			}
			b := append(etJoin(t, segs), etHex(t, c.suffix)...)
			wantOff := len(b) - len(etHex(t, c.suffix))
			if c.at != "" {
				wantOff = etOff(t, segs, c.at) + c.delta
			}
			_, root, err := f.c.DecodeBody(f.every.Request, c.v, b, codec.Options{Spans: true})
			etCheckDecodeError(t, err, root, len(b), wantOff, c.path, c.is)
		})
	}
}

// TestTruncationEveryField cuts the v0 and v1 bodies at every byte: each
// cut gives ErrTruncated (or ErrCountTooLarge when a count promises more
// elements than the bytes left could hold) at an offset inside the field
// being read, with that field in the path, and a partial tree.
func TestTruncationEveryField(t *testing.T) {
	f := etLoad(t)
	for _, v := range []int16{0, 1} {
		segs := etVectors()[v]
		full := etJoin(t, segs)
		off := 0
		for _, s := range segs {
			n := len(etHex(t, s.hex))
			for cut := off; cut < off+n; cut++ {
				_, root, err := f.c.DecodeBody(f.every.Request, v, full[:cut], codec.Options{Spans: true})
				var de *wire.DecodeError
				if !errors.As(err, &de) {
					t.Errorf("v%d %s cut at %d: err = %v, want a *wire.DecodeError", v, s.name, cut, err)
					continue
				}
				if !errors.Is(err, wire.ErrTruncated) && !errors.Is(err, wire.ErrCountTooLarge) {
					t.Errorf("v%d %s cut at %d: %v is neither ErrTruncated nor ErrCountTooLarge", v, s.name, cut, err)
				}
				if de.Offset < off || de.Offset > cut {
					t.Errorf("v%d %s cut at %d: offset %d outside [%d, %d]", v, s.name, cut, de.Offset, off, cut)
				}
				wantPath := "EveryTypeRequest." + s.name
				if s.name == "tagged_fields" && de.Path == "EveryTypeRequest" {
					wantPath = de.Path // the count itself is missing or too large
				}
				if !strings.HasPrefix(de.Path, wantPath) {
					t.Errorf("v%d %s cut at %d: path %q, want prefix %q", v, s.name, cut, de.Path, wantPath)
				}
				if problems := etTiles(root, cut); len(problems) > 0 {
					t.Errorf("v%d %s cut at %d: partial tree: %s", v, s.name, cut, strings.Join(problems, "; "))
				}
			}
			off += n
		}
	}
	// Exact offsets and paths for one truncation of each kind of value.
	segs := etEveryV1
	full := etJoin(t, segs)
	exact := []struct {
		name string
		cut  int
		at   int
		path string
	}{
		{"int16", etOff(t, segs, "Int16") + 1, etOff(t, segs, "Int16"), "EveryTypeRequest.Int16"},
		{"int64", etOff(t, segs, "Int64") + 7, etOff(t, segs, "Int64"), "EveryTypeRequest.Int64"},
		{"float64", etOff(t, segs, "Float64") + 3, etOff(t, segs, "Float64"), "EveryTypeRequest.Float64"},
		{"uuid", etOff(t, segs, "Uuid") + 15, etOff(t, segs, "Uuid"), "EveryTypeRequest.Uuid"},
		{"string body", etOff(t, segs, "Str") + 2, etOff(t, segs, "Str"), "EveryTypeRequest.Str"},
		{"bytes body", etOff(t, segs, "Bytes") + 1, etOff(t, segs, "Bytes"), "EveryTypeRequest.Bytes"},
		{"string array element", etOff(t, segs, "Strings") + 3, etOff(t, segs, "Strings") + 3, "EveryTypeRequest.Strings[1]"},
		// the element's own tagged-field count is missing
		{"struct element tag count", etOff(t, segs, "Items") + 7, etOff(t, segs, "Items") + 7, "EveryTypeRequest.Items[0].tagged_fields"},
		{"nullable struct marker", etOff(t, segs, "Opt"), etOff(t, segs, "Opt"), "EveryTypeRequest.Opt"},
		{"nullable struct field", etOff(t, segs, "Opt") + 1, etOff(t, segs, "Opt") + 1, "EveryTypeRequest.Opt.Flag"},
		// tag 2's size byte says 3 but nothing follows it
		{"tagged value beyond the cut", etOff(t, segs, "tagged_fields") + 13, etOff(t, segs, "tagged_fields") + 12, "EveryTypeRequest.tagged_fields"},
	}
	for _, c := range exact {
		_, root, err := f.c.DecodeBody(f.every.Request, 1, full[:c.cut], codec.Options{Spans: true})
		t.Run(c.name, func(t *testing.T) {
			etCheckDecodeError(t, err, root, c.cut, c.at, c.path, wire.ErrTruncated)
		})
	}
}

// etCheckDecodeError checks a decode error and the partial tree.
func etCheckDecodeError(t *testing.T, err error, root *span.Tree, size, off int, path string, is error) {
	t.Helper()
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v (%T), want a *wire.DecodeError", err, err)
	}
	if de.Offset != off || de.Path != path {
		t.Errorf("error at %d %q, want %d %q (%v)", de.Offset, de.Path, off, path, err)
	}
	if !errors.Is(err, is) {
		t.Errorf("errors.Is(%v, %v) is false", err, is)
	}
	if root == nil || root.Root() == span.None {
		t.Fatal("no partial span tree")
	}
	marked := false
	root.Walk(root.Root(), func(id span.ID, _ int) {
		if e := root.Err(id); e != nil && errors.Is(e, is) {
			marked = true
		}
	})
	if !marked {
		t.Errorf("no node of the partial tree carries the error")
	}
	if problems := etTiles(root, size); len(problems) > 0 {
		t.Errorf("partial tree: %s", strings.Join(problems, "; "))
	}
}

// etTiles checks that the leaves of t cover [0, size) in order with no
// gap or overlap, and that the root spans it all.
func etTiles(t *span.Tree, size int) []string {
	var out []string
	if t == nil || t.Root() == span.None {
		return []string{"no tree"}
	}
	root := t.Root()
	if r := t.N(root); r.Off != 0 || int(r.Len) != size {
		out = append(out, fmt.Sprintf("root covers [%d,+%d], want [0,+%d]", r.Off, r.Len, size))
	}
	at := 0
	for _, id := range t.Leaves(root) {
		if id == root {
			break
		}
		if l := t.N(id); int(l.Off) != at {
			out = append(out, fmt.Sprintf("leaf %s at %d, expected %d", t.Path(id), l.Off, at))
		}
		at = int(t.N(id).Off + t.N(id).Len)
	}
	if at != size && !t.IsLeaf(root) {
		out = append(out, fmt.Sprintf("leaves end at %d, want %d", at, size))
	}
	return out
}

// TestEncodeErrors: values that cannot be written name the field.
func TestEncodeErrors(t *testing.T) {
	f := etLoad(t)
	body := f.every.Request.Body
	cases := []struct {
		name  string
		v     int16
		field string
		val   codec.Value
		path  string
		is    error
	}{
		{"null in a non-nullable string", 1, "Str", etNull, "EveryTypeRequest.Str", codec.ErrNotNullable},
		{"null in a non-nullable array", 0, "Int32s", etNull, "EveryTypeRequest.Int32s", codec.ErrNotNullable},
		{"int8 out of range", 1, "Int8", etI(200), "EveryTypeRequest.Int8", codec.ErrOutOfRange},
		{"uint16 out of range", 1, "Uint16", etI(-1), "EveryTypeRequest.Uint16", codec.ErrOutOfRange},
		{"non-default field absent at v1", 1, "OldField", etI(9), "EveryTypeRequest.OldField", codec.ErrNonDefault},
		{"short uuid", 1, "Uuid", etB(1, 2, 3), "EveryTypeRequest.Uuid", codec.ErrShape},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			val := etEveryValue(t, f, c.v)
			val.Kids()[etFieldOf(t, body, c.field).Index] = c.val
			_, err := f.c.EncodeBody(nil, f.every.Request, c.v, &val)
			var ee *codec.EncodeError
			if !errors.As(err, &ee) || !errors.Is(err, c.is) || ee.Path != c.path {
				t.Errorf("err = %v, want %v at %s", err, c.is, c.path)
			}
		})
	}
}

// TestDefaults: parsed spec defaults reach the values: "0x10" on an int16
// of a common struct, "5" on a tagged int32, "null" on a tagged struct,
// "7" on a field of v0 only; implicit defaults are zero or empty.
func TestDefaults(t *testing.T) {
	f := etLoad(t)
	body := f.every.Request.Body
	common := etFieldOf(t, body, "Common").Type.Struct
	if got := codec.DefaultValue(etFieldOf(t, common, "C")); got.Int() != 16 {
		t.Errorf("Common.C default = %d, want 16 (0x10)", got.Int())
	}
	for name, want := range map[string]int64{"TagInt": 5, "OldField": 7, "Int32": 0} {
		if got := codec.DefaultValue(etFieldOf(t, body, name)); got.Int() != want || got.IsNull() {
			t.Errorf("%s default = %+v, want %d", name, got, want)
		}
	}
	if got := codec.DefaultValue(etFieldOf(t, body, "TagNullStruct")); !got.IsNull() {
		t.Errorf("TagNullStruct default is not null")
	}
	if got := codec.DefaultValue(etFieldOf(t, body, "Uuid")); !bytes.Equal(got.Bytes(), make([]byte, 16)) {
		t.Errorf("Uuid default = %x, want 16 zero bytes", got.Bytes())
	}
}
