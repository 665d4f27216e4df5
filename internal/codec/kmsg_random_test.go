package codec_test

// Differential checks with random values: kmsg encodes randomly filled
// messages; our codec must decode them to the same values and encode them
// back to the same bytes.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// randomIterations is how many random messages each (api, version, kind)
// gets; about 600 triples times this stays well under a few seconds.
const randomIterations = 8

// randFiller fills kmsg values with random data that is legal at one
// version according to the spec.
type randFiller struct {
	rng      *rand.Rand
	v        int16
	flexible bool
	// setTagged counts tagged fields given a non-default value and
	// unknown counts unknown tags added, so the test can show it
	// exercised them.
	setTagged, unknown int
}

// fillStruct fills the addressable struct gv mapped by m. Go fields with
// no spec counterpart, and fields absent at the version, keep kmsg's
// defaults; tagged fields get a random value half of the time; flexible
// structs sometimes carry unknown tags.
func (rf *randFiller) fillStruct(gv reflect.Value, m *structMap, top bool, depth int) {
	def := defaulted(m.gt)
	for j := 0; j < gv.NumField(); j++ {
		if top && j == 0 || !m.gt.Field(j).IsExported() {
			continue // Version
		}
		gv.Field(j).Set(def.Field(j))
	}
	maxTag := int32(-1)
	for i, f := range m.s.Fields {
		maxTag = max(maxTag, f.Tag)
		gi := m.gi[i]
		if gi < 0 || !f.Versions.Contains(rf.v) {
			continue
		}
		tagged := rf.flexible && f.IsTagged(rf.v)
		if tagged {
			if rf.rng.Intn(2) == 0 {
				continue
			}
			rf.setTagged++
		}
		rf.fillValue(gv.Field(gi), f.Type, f.IsNullable(rf.v) && !tagged, tagged, m.sub[i], depth)
	}
	if rf.flexible && m.tags >= 0 && rf.rng.Intn(4) == 0 {
		// Tags far above any the spec (or a newer kmsg) defines; some
		// need a two-byte uvarint.
		tags := gv.Field(m.tags).Addr().Interface().(*kmsg.Tags)
		for n := 1 + rf.rng.Intn(2); n > 0; n-- {
			tag := uint32(max(100, maxTag+1) + rf.rng.Int31n(3))
			if rf.rng.Intn(2) == 0 {
				tag += 200
			}
			tags.Set(tag, rf.bytes(5))
			rf.unknown++
		}
	}
}

// bytes returns up to n random bytes, or one time in twenty 128-400 of
// them, so that lengths need multi-byte uvarints.
func (rf *randFiller) bytes(n int) []byte {
	if rf.rng.Intn(20) == 0 {
		n = 128 + rf.rng.Intn(273)
	}
	b := make([]byte, rf.rng.Intn(n+1))
	rf.rng.Read(b)
	return b
}

func (rf *randFiller) string() string {
	const letters = "abcdefghijklmnopqrstuvwxyz-._ÄÖü€0123456789"
	r := []rune(letters)
	n := 9
	if rf.rng.Intn(20) == 0 {
		n = 200 // multi-byte compact lengths
	}
	s := make([]rune, rf.rng.Intn(n))
	for i := range s {
		s[i] = r[rf.rng.Intn(len(r))]
	}
	return string(s)
}

// fillValue sets fv to a random value of spec type t. nullable allows
// null; nonDefault (for tagged fields) avoids empty arrays and nulls.
func (rf *randFiller) fillValue(fv reflect.Value, t *schema.Type, nullable, nonDefault bool, sub *structMap, depth int) {
	null := nullable && rf.rng.Intn(4) == 0
	switch t.Kind {
	case schema.KindBool:
		fv.SetBool(rf.rng.Intn(2) == 1)
	case schema.KindInt8:
		fv.SetInt(int64(int8(rf.rng.Uint32())))
	case schema.KindInt16:
		fv.SetInt(int64(int16(rf.rng.Uint32())))
	case schema.KindInt32:
		fv.SetInt(int64(int32(rf.rng.Uint32())))
	case schema.KindInt64:
		fv.SetInt(int64(rf.rng.Uint64()))
	case schema.KindUint16:
		fv.SetUint(uint64(uint16(rf.rng.Uint32())))
	case schema.KindUint32:
		fv.SetUint(uint64(rf.rng.Uint32()))
	case schema.KindFloat64:
		fv.SetFloat(rf.rng.NormFloat64() * 1e6)
	case schema.KindUUID:
		for k := 0; k < 16; k++ {
			fv.Index(k).SetUint(uint64(rf.rng.Intn(256)))
		}
	case schema.KindString:
		if fv.Kind() == reflect.Pointer {
			if null {
				fv.SetZero()
				return
			}
			p := reflect.New(fv.Type().Elem())
			p.Elem().SetString(rf.string())
			fv.Set(p)
			return
		}
		fv.SetString(rf.string())
	case schema.KindBytes:
		if null {
			fv.SetZero()
			return
		}
		fv.SetBytes(rf.bytes(8))
	case schema.KindRecords:
		if null {
			fv.SetZero()
			return
		}
		fv.SetBytes(rf.batches())
	case schema.KindArray:
		if null {
			fv.SetZero()
			return
		}
		n := rf.rng.Intn(4)
		if depth > 3 {
			n = rf.rng.Intn(2)
		}
		if nonDefault {
			n = max(n, 1)
		}
		if t.Elem.Kind != schema.KindStruct && rf.rng.Intn(25) == 0 {
			n = 128 + rf.rng.Intn(40) // a multi-byte compact count
		}
		s := reflect.MakeSlice(fv.Type(), n, n)
		for k := 0; k < n; k++ {
			rf.fillValue(s.Index(k), t.Elem, false, false, sub, depth+1)
		}
		fv.Set(s)
	case schema.KindStruct:
		if fv.Kind() == reflect.Pointer {
			if null {
				fv.SetZero()
				return
			}
			fv.Set(reflect.New(fv.Type().Elem()))
			fv = fv.Elem()
		}
		rf.fillStruct(fv, sub, false, depth+1)
	}
}

// batches returns one or two valid RecordBatch v2 entries with up to two
// hand-encoded records each, or (one time in six) legacy MessageSet v0/v1
// entries written by kmsg, as old Fetch data can hold.
func (rf *randFiller) batches() []byte {
	var out []byte
	if rf.rng.Intn(6) == 0 {
		magic := int8(rf.rng.Intn(2))
		for n := 1 + rf.rng.Intn(2); n > 0; n-- {
			raw, _, _, _, _, _ := kmsgLegacy(rf.rng, magic)
			out = append(out, raw...)
		}
		return out
	}
	for n := 1 + rf.rng.Intn(2); n > 0; n-- {
		count := rf.rng.Intn(3)
		var area []byte
		for i := 0; i < count; i++ {
			area = appendRecord(area, rf.rng.Int63n(1000), int32(i), rf.nullableBytes(), rf.nullableBytes(), rf.headers())
		}
		out = records.AppendBatch(out, &records.Batch{
			BaseOffset:           rf.rng.Int63(),
			PartitionLeaderEpoch: rf.rng.Int31(),
			Attributes:           int16(rf.rng.Intn(4) << 3), // LogAppendTime / transactional, uncompressed
			LastOffsetDelta:      int32(max(count-1, 0)),
			BaseTimestamp:        rf.rng.Int63(),
			MaxTimestamp:         rf.rng.Int63(),
			ProducerID:           rf.rng.Int63(),
			ProducerEpoch:        int16(rf.rng.Intn(math.MaxInt16)),
			BaseSequence:         rf.rng.Int31(),
			NumRecords:           int32(count),
			Records:              area,
		})
	}
	return out
}

func (rf *randFiller) nullableBytes() []byte {
	if rf.rng.Intn(4) == 0 {
		return nil
	}
	return rf.bytes(6)
}

func (rf *randFiller) headers() [][2][]byte {
	h := make([][2][]byte, rf.rng.Intn(3))
	for i := range h {
		h[i] = [2][]byte{[]byte(rf.string()), rf.nullableBytes()}
	}
	return h
}

// appendRecord encodes a Record v2 by hand: varint length, attributes,
// varlong timestamp delta, varint offset delta, key, value, headers (nil
// key, value or header value = length -1).
func appendRecord(dst []byte, tsDelta int64, offDelta int32, key, value []byte, headers [][2][]byte) []byte {
	blob := func(b []byte, x []byte) []byte {
		if x == nil {
			return binary.AppendVarint(b, -1)
		}
		return append(binary.AppendVarint(b, int64(len(x))), x...)
	}
	body := []byte{0}
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, int64(offDelta))
	body = blob(body, key)
	body = blob(body, value)
	body = binary.AppendVarint(body, int64(len(headers)))
	for _, h := range headers {
		body = blob(body, h[0])
		body = blob(body, h[1])
	}
	return append(binary.AppendVarint(dst, int64(len(body))), body...)
}

// compareValue reports where our decoded value differs from kmsg's.
func compareValue(ours *codec.Value, fv reflect.Value, t *schema.Type, sub *structMap, v int16, path string, out *[]string) {
	bad := func(format string, args ...any) {
		*out = append(*out, path+": "+fmt.Sprintf(format, args...))
	}
	switch t.Kind {
	case schema.KindBool:
		if (ours.Int() != 0) != fv.Bool() {
			bad("ours %d, kmsg %v", ours.Int(), fv.Bool())
		}
	case schema.KindInt8, schema.KindInt16, schema.KindInt32, schema.KindInt64:
		if ours.Int() != fv.Int() {
			bad("ours %d, kmsg %d", ours.Int(), fv.Int())
		}
	case schema.KindUint16, schema.KindUint32:
		if uint64(ours.Int()) != fv.Uint() {
			bad("ours %d, kmsg %d", ours.Int(), fv.Uint())
		}
	case schema.KindFloat64:
		if math.Float64bits(ours.Float()) != math.Float64bits(fv.Float()) {
			bad("ours %g, kmsg %g", ours.Float(), fv.Float())
		}
	case schema.KindUUID:
		var u [16]byte
		reflect.Copy(reflect.ValueOf(u[:]), fv)
		if !bytes.Equal(ours.Bytes(), u[:]) {
			bad("ours %x, kmsg %x", ours.Bytes(), u)
		}
	case schema.KindString:
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() != ours.IsNull() {
				bad("ours null=%v, kmsg nil=%v", ours.IsNull(), fv.IsNil())
				return
			}
			if fv.IsNil() {
				return
			}
			fv = fv.Elem()
		}
		if ours.IsNull() || string(ours.Bytes()) != fv.String() {
			bad("ours %q (null %v), kmsg %q", ours.Bytes(), ours.IsNull(), fv.String())
		}
	case schema.KindBytes, schema.KindRecords:
		if ours.IsNull() != fv.IsNil() && (ours.IsNull() || fv.Len() > 0) {
			bad("ours null=%v, kmsg nil=%v", ours.IsNull(), fv.IsNil())
		} else if !bytes.Equal(ours.Bytes(), fv.Bytes()) {
			bad("ours %x, kmsg %x", ours.Bytes(), fv.Bytes())
		}
	case schema.KindArray:
		if ours.IsNull() != fv.IsNil() && (ours.IsNull() || fv.Len() > 0) {
			bad("ours null=%v, kmsg nil=%v", ours.IsNull(), fv.IsNil())
			return
		}
		if len(ours.Kids()) != fv.Len() {
			bad("ours %d elements, kmsg %d", len(ours.Kids()), fv.Len())
			return
		}
		for k := range ours.Kids() {
			compareValue(&ours.Kids()[k], fv.Index(k), t.Elem, sub, v, fmt.Sprintf("%s[%d]", path, k), out)
		}
	case schema.KindStruct:
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() != ours.IsNull() {
				bad("ours null=%v, kmsg nil=%v", ours.IsNull(), fv.IsNil())
				return
			}
			if fv.IsNil() {
				return
			}
			fv = fv.Elem()
		}
		compareStruct(ours, fv, sub, v, path+".", out)
	}
}

// compareStruct compares every field on the wire at v (and every tagged
// field, sent or at its default) and the unknown tags.
func compareStruct(ours *codec.Value, gv reflect.Value, m *structMap, v int16, path string, out *[]string) {
	for i, f := range m.s.Fields {
		if m.gi[i] < 0 || !f.Versions.Contains(v) {
			continue
		}
		compareValue(&ours.Kids()[i], gv.Field(m.gi[i]), f.Type, m.sub[i], v, path+f.Name, out)
	}
	if m.tags < 0 {
		return
	}
	var theirs []codec.RawTag
	tags := gv.Field(m.tags).Addr().Interface().(*kmsg.Tags)
	tags.Each(func(k uint32, b []byte) { theirs = append(theirs, codec.RawTag{Tag: k, Data: b}) })
	if len(theirs) != len(ours.Unknown()) {
		*out = append(*out, fmt.Sprintf("%sunknown tags: ours %v, kmsg %v", path, ours.Unknown(), theirs))
		return
	}
	for k := range theirs {
		if theirs[k].Tag != ours.Unknown()[k].Tag || !bytes.Equal(theirs[k].Data, ours.Unknown()[k].Data) {
			*out = append(*out, fmt.Sprintf("%sunknown tags: ours %v, kmsg %v", path, ours.Unknown(), theirs))
			return
		}
	}
}

// TestKmsgRandom fills kmsg messages of every 4.3 (api, version, kind)
// kmsg supports with random values (nulls where the spec allows them, 0-3
// array elements, tagged fields set, unknown tags, valid record batches),
// encodes them with kmsg and requires that our codec decodes the body and
// the frame, reads the same values kmsg holds, and encodes the same bytes.
func TestKmsgRandom(t *testing.T) {
	rel := loadRelease(t, kmsgLabel)
	messages, skipped := randomRelease(t, rel, randomIterations)
	if messages < minCompared*randomIterations {
		t.Errorf("only %d random messages checked, want %d (skipped %v)", messages, minCompared*randomIterations, skipped)
	}
}

// TestKmsgRandomOtherReleases does the same, with fewer messages, for the
// older releases, whose specs differ (3.9 still has Produce v0-2, Fetch
// v0-3 and the ZooKeeper-era APIs). Triples the smallest comparison skips
// (kmsg lacks a field, or an unstable version kmsg lays out differently)
// are left out.
func TestKmsgRandomOtherReleases(t *testing.T) {
	for _, label := range releaseLabels(t) {
		if label == kmsgLabel {
			continue
		}
		t.Run(label, func(t *testing.T) {
			rel := loadRelease(t, label)
			const iterations = 3
			messages, skipped := randomRelease(t, rel, iterations)
			if all := len(triples(rel.reg)); messages*10 < all*iterations*9 {
				t.Errorf("only %d random messages for %d triples (skipped %v)", messages, all, skipped)
			}
		})
	}
}

// randomRelease runs the random comparison over every triple of rel that
// kmsg can represent and returns the number of messages checked and the
// triples left out.
func randomRelease(t *testing.T, rel *release, iterations int) (messages int, skipped []string) {
	t.Helper()
	var setTagged, unknown, bodyBytes int
	for _, tr := range triples(rel.reg) {
		probe, why := kmsgMessage(tr)
		if probe == nil {
			skipped = append(skipped, fmt.Sprintf("%s: %s", tr, why))
			continue
		}
		m := tr.msg()
		sm := mapStruct(m.Body, reflect.ValueOf(probe).Elem().Type(), true)
		sf := &smallestFiller{v: tr.v, flexible: m.IsFlexible(tr.v)}
		sf.fillStruct(reflect.ValueOf(probe).Elem(), sm, "")
		if len(sf.missing) > 0 {
			skipped = append(skipped, fmt.Sprintf("%s: kmsg has no field for %v", tr, sf.missing))
			continue
		}
		if tr.api.Request.LatestVersionUnstable && tr.v == tr.api.Request.Valid.Hi && rel.label != kmsgLabel {
			skipped = append(skipped, fmt.Sprintf("%s: unstable in this release", tr))
			continue
		}
		for it := 0; it < iterations; it++ {
			seed := int64(tr.api.Key)<<24 | int64(tr.v)<<16 | int64(tr.kind)<<8 | int64(it)
			msg, _ := kmsgMessage(tr)
			gv := reflect.ValueOf(msg).Elem()
			rf := &randFiller{rng: rand.New(rand.NewSource(seed)), v: tr.v, flexible: m.IsFlexible(tr.v)}
			rf.fillStruct(gv, sm, true, 0)
			if !randomOne(t, rel, tr, msg, gv, sm, rf, seed) {
				break // one report per triple is enough
			}
			messages++
			setTagged += rf.setTagged
			unknown += rf.unknown
			bodyBytes += len(msg.AppendTo(nil))
		}
	}
	t.Logf("%s: %d random messages (%d body bytes) from kmsg decoded and re-encoded; %d tagged fields set, %d unknown tags; %d triples left out: %v",
		rel.label, messages, bodyBytes, setTagged, unknown, len(skipped), skipped)
	if setTagged == 0 || unknown == 0 {
		t.Errorf("no tagged (%d) or unknown (%d) fields exercised", setTagged, unknown)
	}
	return messages, skipped
}

func randomOne(t *testing.T, rel *release, tr triple, msg kmsgMsg, gv reflect.Value, sm *structMap, rf *randFiller, seed int64) bool {
	t.Helper()
	m := tr.msg()
	body := msg.AppendTo(nil)
	val, _, err := rel.c.DecodeBody(m, tr.v, body, codec.Options{})
	if err != nil {
		t.Errorf("%s seed %d: decoding kmsg's body: %v\nbody % x", tr, seed, err, body)
		return false
	}
	var diffs []string
	compareStruct(&val, gv, sm, tr.v, m.Body.Name+".", &diffs)
	if len(diffs) > 0 {
		t.Errorf("%s seed %d: decoded values differ from kmsg's:\n%v", tr, seed, diffs)
		return false
	}
	again, err := rel.c.EncodeBody(nil, m, tr.v, &val)
	if err != nil {
		t.Errorf("%s seed %d: re-encoding: %v", tr, seed, err)
		return false
	}
	if !bytes.Equal(again, body) {
		t.Errorf("%s seed %d: re-encoded body differs\n ours % x\nkmsg % x", tr, seed, again, body)
		return false
	}

	// The frame, with a random correlation id and client id (or null).
	corr := rf.rng.Int31()
	var frame []byte
	var clientID *string
	if req, ok := msg.(kmsg.Request); ok {
		f := kmsg.NewRequestFormatter()
		if rf.rng.Intn(4) != 0 {
			id := rf.string()
			clientID = &id
			f = kmsg.NewRequestFormatter(kmsg.FormatterClientID(id))
		}
		frame = f.AppendRequest(nil, req, corr)
		if tr.api.Key == 7 && tr.v == 0 { // kmsg stops after the v0 header
			frame = append(frame, body...)
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		}
	} else {
		frame = responseFrame(tr.api.Key, msg.IsFlexible(), corr, body)
	}
	f, err := decodeFrame(rel.c, tr, frame, codec.Options{Spans: rf.rng.Intn(2) == 0})
	if err != nil {
		t.Errorf("%s seed %d: decoding kmsg's frame: %v", tr, seed, err)
		return false
	}
	if f.API != tr.api || f.Version != tr.v || f.CorrelationID != corr || f.Size != len(frame) {
		t.Errorf("%s seed %d: frame decoded as %v v%d corr %d size %d", tr, seed, f.API, f.Version, f.CorrelationID, f.Size)
	}
	if tr.kind == schema.TypeRequest && f.HeaderVersion >= 1 {
		if clientID == nil && !f.ClientIDNull || clientID != nil && (f.ClientIDNull || string(f.ClientID) != *clientID) {
			t.Errorf("%s seed %d: client id %q (null %v), kmsg wrote %v", tr, seed, f.ClientID, f.ClientIDNull, clientID)
		}
	}
	if f.SpanTree() != nil {
		for _, p := range checkTree(f.SpanTree(), len(frame)) {
			t.Errorf("%s seed %d: spans: %s", tr, seed, p)
		}
	}
	back, err := encodeFrame(rel.c, f)
	if err != nil || !bytes.Equal(back, frame) {
		t.Errorf("%s seed %d: re-encoded frame differs (%v)\n ours % x\nkmsg % x", tr, seed, err, back, frame)
		return false
	}
	return true
}

// TestKmsgRecordBatch encodes record batches with kmsg's RecordBatch and
// Record types (lengths and CRC computed here with hash/crc32), decodes them
// with internal/records and compares every field, and checks that
// records.AppendBatch writes the same bytes for the same batch.
func TestKmsgRecordBatch(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for it := 0; it < 200; it++ {
		var recs []kmsg.Record
		var area []byte
		for i, n := 0, rng.Intn(4); i < n; i++ {
			r := kmsg.Record{TimestampDelta64: rng.Int63n(1 << 40), OffsetDelta: int32(i)}
			if rng.Intn(4) != 0 {
				r.Key = randBytes(rng, 10)
			}
			if rng.Intn(4) != 0 {
				r.Value = randBytes(rng, 30)
			}
			for h := rng.Intn(3); h > 0; h-- {
				hd := kmsg.Header{Key: string(randBytes(rng, 5))}
				if rng.Intn(3) != 0 {
					hd.Value = randBytes(rng, 5)
				}
				r.Headers = append(r.Headers, hd)
			}
			enc := r.AppendTo(nil)         // with Length 0, one varint byte
			r.Length = int32(len(enc) - 1) // the bytes after the length
			recs = append(recs, r)
			area = r.AppendTo(area)
		}
		kb := kmsg.RecordBatch{
			FirstOffset: rng.Int63(), PartitionLeaderEpoch: rng.Int31(), Magic: 2,
			Attributes: int16(rng.Intn(4) << 3), LastOffsetDelta: int32(max(len(recs)-1, 0)),
			FirstTimestamp: rng.Int63(), MaxTimestamp: rng.Int63(), ProducerID: rng.Int63(),
			ProducerEpoch: int16(rng.Intn(math.MaxInt16)), FirstSequence: rng.Int31(),
			NumRecords: int32(len(recs)), Records: area,
		}
		raw := kb.AppendTo(nil)
		kb.Length = int32(len(raw) - 12)
		raw = kb.AppendTo(nil)
		kb.CRC = int32(crc32.Checksum(raw[21:], castagnoli))
		raw = kb.AppendTo(nil)

		ours := records.AppendBatch(nil, &records.Batch{
			BaseOffset: kb.FirstOffset, PartitionLeaderEpoch: kb.PartitionLeaderEpoch, Attributes: kb.Attributes,
			LastOffsetDelta: kb.LastOffsetDelta, BaseTimestamp: kb.FirstTimestamp, MaxTimestamp: kb.MaxTimestamp,
			ProducerID: kb.ProducerID, ProducerEpoch: kb.ProducerEpoch, BaseSequence: kb.FirstSequence,
			NumRecords: kb.NumRecords, Records: area,
		})
		if !bytes.Equal(ours, raw) {
			t.Fatalf("iteration %d: records.AppendBatch differs from kmsg\n ours % x\nkmsg % x", it, ours, raw)
		}
		for _, d := range compareBatch(t, raw, &kb, recs) {
			t.Errorf("iteration %d: %s", it, d)
		}
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, rng.Intn(n+1))
	rng.Read(b)
	return b
}

// descRecords describes the root of a records payload decoded alone.
var descRecords = span.NewDesc("Records", "records", "")

// recordsTree starts a tree over a records payload: its root, a records
// field.
func recordsTree(b []byte) *span.Tree {
	tr := &span.Tree{}
	tr.Reset(b)
	root := tr.Add(span.None, descRecords, 0, span.CatRecordBatch)
	tr.N(root).Val = span.ValRecords
	return tr
}

// compareBatch decodes one batch with internal/records and compares its
// span leaves with the kmsg batch and records that produced it.
func compareBatch(t *testing.T, raw []byte, kb *kmsg.RecordBatch, recs []kmsg.Record) []string {
	t.Helper()
	tr := recordsTree(raw)
	d := records.Decoder{R: &wire.Reader{B: raw}, Tree: tr}
	if err := d.Decode(0); err != nil {
		return []string{fmt.Sprintf("decode: %v", err)}
	}
	tr.N(0).Len = int32(len(raw))
	root := row{tr, tr.Root()}
	var out []string
	if p := checkLeaves(tr, len(raw)); len(p) > 0 {
		out = append(out, p...)
	}
	if len(root.Kids()) != 1 || d.Batches != 1 {
		return append(out, fmt.Sprintf("%d batches decoded, want 1", d.Batches))
	}
	bn := root.Kids()[0]
	ints := map[string]int64{
		"baseOffset": kb.FirstOffset, "batchLength": int64(kb.Length), "partitionLeaderEpoch": int64(kb.PartitionLeaderEpoch),
		"magic": int64(kb.Magic), "crc": int64(uint32(kb.CRC)), "attributes": int64(kb.Attributes),
		"lastOffsetDelta": int64(kb.LastOffsetDelta), "baseTimestamp": kb.FirstTimestamp, "maxTimestamp": kb.MaxTimestamp,
		"producerId": kb.ProducerID, "producerEpoch": int64(kb.ProducerEpoch), "baseSequence": int64(kb.FirstSequence),
		"recordsCount": int64(kb.NumRecords),
	}
	for name, want := range ints {
		if n := child(bn, name); n == nil || n.Int() != want {
			out = append(out, fmt.Sprintf("batch %s: got %v, kmsg %d", name, n, want))
		}
	}
	var rnodes []row
	for _, k := range bn.Kids() {
		if k.Name() == "Record" {
			rnodes = append(rnodes, k)
		}
	}
	if len(rnodes) != len(recs) {
		return append(out, fmt.Sprintf("%d records decoded, kmsg wrote %d", len(rnodes), len(recs)))
	}
	for i, r := range recs {
		rn := rnodes[i]
		for name, want := range map[string]int64{"length": int64(r.Length), "attributes": int64(r.Attributes),
			"timestampDelta": r.TimestampDelta64, "offsetDelta": int64(r.OffsetDelta), "headerCount": int64(len(r.Headers))} {
			if n := child(rn, name); n == nil || n.Int() != want {
				out = append(out, fmt.Sprintf("record %d %s: got %v, kmsg %d", i, name, n, want))
			}
		}
		out = append(out, compareBlob(child(rn, "key"), r.Key, fmt.Sprintf("record %d key", i))...)
		out = append(out, compareBlob(child(rn, "value"), r.Value, fmt.Sprintf("record %d value", i))...)
		var hnodes []row
		for _, k := range rn.Kids() {
			if k.Name() == "Header" {
				hnodes = append(hnodes, k)
			}
		}
		if len(hnodes) != len(r.Headers) {
			out = append(out, fmt.Sprintf("record %d: %d headers decoded, kmsg wrote %d", i, len(hnodes), len(r.Headers)))
			continue
		}
		for h, hd := range r.Headers {
			out = append(out, compareBlob(child(hnodes[h], "headerKey"), []byte(hd.Key), fmt.Sprintf("record %d header %d key", i, h))...)
			out = append(out, compareBlob(child(hnodes[h], "headerValue"), hd.Value, fmt.Sprintf("record %d header %d value", i, h))...)
		}
	}
	return out
}

// compareBlob compares a decoded varint-prefixed blob with kmsg's bytes
// (nil = null).
func compareBlob(n *row, want []byte, what string) []string {
	switch {
	case n == nil:
		return []string{what + ": not decoded"}
	case n.Null() != (want == nil) || !bytes.Equal(n.Bytes(), want):
		return []string{fmt.Sprintf("%s: got %x (null %v), kmsg %x (nil %v)", what, n.Bytes(), n.Null(), want, want == nil)}
	}
	return nil
}

// child returns n's child named name, nil when it has none.
func child(n row, name string) *row {
	for _, k := range n.Kids() {
		if k.Name() == name {
			return &k
		}
	}
	return nil
}

// checkLeaves checks that the leaves of t tile [0, size).
func checkLeaves(t *span.Tree, size int) []string {
	at := 0
	var out []string
	for _, id := range t.Leaves(t.Root()) {
		l := t.N(id)
		if int(l.Off) != at {
			out = append(out, fmt.Sprintf("leaf %s at %d, expected %d", t.Path(id), l.Off, at))
		}
		at = int(l.Off + l.Len)
	}
	if at != size {
		out = append(out, fmt.Sprintf("leaves end at %d of %d", at, size))
	}
	return out
}

// kmsgLegacy encodes a legacy MessageSet entry (magic 0 or 1) with kmsg's
// MessageV0/MessageV1 types; messageSize and the CRC-32/IEEE of magic
// through value are computed here.
func kmsgLegacy(rng *rand.Rand, magic int8) (raw []byte, offset, ts int64, attrs int8, key, value []byte) {
	offset = rng.Int63()
	if rng.Intn(4) != 0 {
		key = randBytes(rng, 8)
	}
	if rng.Intn(4) != 0 {
		value = randBytes(rng, 20)
	}
	finish := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
		return b
	}
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Key: key, Value: value}
		return finish(m.AppendTo(nil)), offset, 0, 0, key, value
	}
	ts = rng.Int63n(1 << 42)
	attrs = int8(rng.Intn(2) << 3) // timestamp type
	m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Key: key, Value: value}
	return finish(m.AppendTo(nil)), offset, ts, attrs, key, value
}

// TestKmsgLegacyMessageSet decodes MessageSet v0/v1 entries written by
// kmsg (several per payload, sometimes with a cut-off trailing entry, as
// Fetch may return) with internal/records and compares every field.
func TestKmsgLegacyMessageSet(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for it := 0; it < 200; it++ {
		magic := int8(it % 2)
		type entry struct {
			off, ts    int64
			attrs      int8
			key, value []byte
		}
		var payload []byte
		var want []entry
		for n := 1 + rng.Intn(3); n > 0; n-- {
			raw, off, ts, attrs, key, value := kmsgLegacy(rng, magic)
			payload = append(payload, raw...)
			want = append(want, entry{off, ts, attrs, key, value})
		}
		full := len(payload)
		if rng.Intn(3) == 0 { // a trailing partial entry
			raw, _, _, _, _, _ := kmsgLegacy(rng, magic)
			payload = append(payload, raw[:1+rng.Intn(len(raw)-1)]...)
		}
		tr := recordsTree(payload)
		d := records.Decoder{R: &wire.Reader{B: payload}, Tree: tr, AllowPartial: true} // Fetch data
		if err := d.Decode(0); err != nil {
			t.Fatalf("iteration %d: %v\n% x", it, err, payload)
		}
		tr.N(0).Len = int32(len(payload))
		for _, p := range checkLeaves(tr, len(payload)) {
			t.Errorf("iteration %d: %s", it, p)
		}
		var msgs []row
		for _, k := range (row{tr, tr.Root()}).Kids() {
			if k.Name() == "Message" {
				msgs = append(msgs, k)
			}
		}
		if len(msgs) != len(want) {
			t.Fatalf("iteration %d: %d messages decoded, kmsg wrote %d (+ partial: %v)", it, len(msgs), len(want), len(payload) > full)
		}
		for i, w := range want {
			mn := msgs[i]
			ints := map[string]int64{"offset": w.off, "magic": int64(magic), "attributes": int64(w.attrs)}
			if magic == 1 {
				ints["timestamp"] = w.ts
			}
			for name, v := range ints {
				if n := child(mn, name); n == nil || n.Int() != v {
					t.Errorf("iteration %d message %d %s: got %v, kmsg %d", it, i, name, n, v)
				}
			}
			for _, p := range compareBlob(child(mn, "key"), w.key, "key") {
				t.Errorf("iteration %d message %d: %s", it, i, p)
			}
			for _, p := range compareBlob(child(mn, "value"), w.value, "value") {
				t.Errorf("iteration %d message %d: %s", it, i, p)
			}
		}
	}
}
