package codec_test

// Differential checks against franz-go's kmsg, an independent, generated
// Kafka codec: the smallest instance of every (api, version, kind) that
// kmsg can encode is built in kmsg by reflection and must give the same
// bytes as ours, body and frame.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// kmsgLabel is the release the kmsg comparison runs against.
const kmsgLabel = "4.3"

// minCompared is the least number of 4.3 triples the smallest-instance
// comparison must cover. kmsg v1.15.1 (pinned in go.mod) knows every 4.3
// API key and version except InitProducerId v6, whose request and response
// 4.3 marks latestVersionUnstable (KIP-939 two-phase commit fields kmsg
// does not have yet): 602 of the 604 triples. A lower count means a triple
// started being skipped (a field alignment broke, a key went missing),
// which must be looked at rather than pass silently.
const minCompared = 602

var tagsType = reflect.TypeFor[kmsg.Tags]()

// kmsgMsg is what kmsg's requests and responses have in common.
type kmsgMsg interface {
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
	SetVersion(int16)
	IsFlexible() bool
	MaxVersion() int16
}

// kmsgMessage returns a fresh kmsg request or response for tr, at tr's
// version, or a reason why kmsg has none.
func kmsgMessage(tr triple) (kmsgMsg, string) {
	var msg kmsgMsg
	if tr.kind == schema.TypeRequest {
		if r := kmsg.RequestForKey(tr.api.Key); r != nil {
			msg = r
		}
	} else if r := kmsg.ResponseForKey(tr.api.Key); r != nil {
		msg = r
	}
	if msg == nil {
		return nil, fmt.Sprintf("kmsg has no %s for key %d", tr.kind, tr.api.Key)
	}
	if tr.v > msg.MaxVersion() {
		return nil, fmt.Sprintf("kmsg's highest version is %d", msg.MaxVersion())
	}
	msg.SetVersion(tr.v)
	return msg, ""
}

// structMap pairs the fields of a spec struct with those of the kmsg Go
// struct that represents it.
type structMap struct {
	s  *schema.Struct
	gt reflect.Type
	// gi is, per spec field (by Field.Index), the index of the matching Go
	// field, or -1 when kmsg has no such field.
	gi []int
	// tags is the index of the UnknownTags field, -1 if none.
	tags int
	// sub maps struct (and struct-array) fields, by spec field index.
	sub []*structMap
}

var (
	mapMu    sync.Mutex
	mapCache = map[[2]any]*structMap{}
)

// mapStruct aligns spec fields with Go fields by position and type, as
// kmsg's names often differ from the spec's (ThrottleTimeMs is
// ThrottleMillis). It is a longest-common-subsequence alignment in which
// two fields can pair only when their types are compatible; equal
// normalised names only break ties between equally long alignments.
func mapStruct(s *schema.Struct, gt reflect.Type, top bool) *structMap {
	mapMu.Lock()
	defer mapMu.Unlock()
	return mapStructLocked(s, gt, top, 0)
}

func mapStructLocked(s *schema.Struct, gt reflect.Type, top bool, depth int) *structMap {
	key := [2]any{s, gt}
	if m, ok := mapCache[key]; ok {
		return m
	}
	m := &structMap{s: s, gt: gt, gi: make([]int, len(s.Fields)), tags: -1, sub: make([]*structMap, len(s.Fields))}
	mapCache[key] = m
	var gos []int // candidate Go fields
	for i := 0; i < gt.NumField(); i++ {
		f := gt.Field(i)
		switch {
		case f.Type == tagsType:
			m.tags = i
		case top && i == 0 && f.Name == "Version":
		case !f.IsExported():
		default:
			gos = append(gos, i)
		}
	}
	n, k := len(s.Fields), len(gos)
	// score[i][j]: best alignment of spec fields i.. with Go fields j..,
	// in units of 8 per pair, so that the tie-breakers (2 for equal
	// normalised names, 1 when a Go pointer goes with a nullable field or a
	// value with a non-nullable one) never outweigh one more pair.
	score := make([][]int, n+1)
	for i := range score {
		score[i] = make([]int, k+1)
	}
	pair := func(i, j int) int {
		f, g := s.Fields[i], gt.Field(gos[j])
		if !compatible(f.Type, g.Type, 0) {
			return -1
		}
		p := 8
		if normName(f.Name) == normName(g.Name) {
			p += 2
		}
		if (g.Type.Kind() == reflect.Pointer) == !f.Nullable.Empty() {
			p++
		}
		return p
	}
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			best := max(score[i+1][j], score[i][j+1])
			if p := pair(i, j); p > 0 {
				best = max(best, p+score[i+1][j+1])
			}
			score[i][j] = best
		}
	}
	for i := range m.gi {
		m.gi[i] = -1
	}
	for i, j := 0, 0; i < n && j < k; {
		if p := pair(i, j); p > 0 && score[i][j] == p+score[i+1][j+1] {
			m.gi[i] = gos[j]
			i, j = i+1, j+1
			continue
		}
		if score[i][j] == score[i+1][j] {
			i++
		} else {
			j++
		}
	}
	// kmsg sometimes orders fields differently from the spec where a
	// version replaced one field by another (DeleteTopics Topics v6+ and
	// TopicNames v0-5). A spec field left unpaired takes the one unpaired
	// compatible Go field, or the one of those with the same name.
	used := map[int]bool{}
	for _, g := range m.gi {
		used[g] = true
	}
	for i, f := range s.Fields {
		if m.gi[i] >= 0 {
			continue
		}
		var cands, named []int
		for _, g := range gos {
			if used[g] || !compatible(f.Type, gt.Field(g).Type, 0) {
				continue
			}
			cands = append(cands, g)
			if normName(f.Name) == normName(gt.Field(g).Name) {
				named = append(named, g)
			}
		}
		switch {
		case len(named) == 1:
			m.gi[i] = named[0]
		case len(cands) == 1:
			m.gi[i] = cands[0]
		}
		if m.gi[i] >= 0 {
			used[m.gi[i]] = true
		}
	}
	for i, f := range s.Fields {
		st := f.Type.ElemStruct()
		if st == nil || m.gi[i] < 0 || depth > 64 {
			continue
		}
		g := gt.Field(m.gi[i]).Type
		for g.Kind() == reflect.Slice || g.Kind() == reflect.Pointer {
			g = g.Elem()
		}
		m.sub[i] = mapStructLocked(st, g, false, depth+1)
	}
	return m
}

// normName folds the naming differences between the spec and kmsg that
// matter for tie-breaking: case, "Ms"/"Millis", "Id"/"ID"/"", "Index".
func normName(s string) string {
	s = strings.ToLower(s)
	for _, suffix := range []string{"millis", "ms", "index", "id"} {
		s = strings.TrimSuffix(s, suffix)
	}
	return s
}

// compatible reports whether a Go type can hold a spec type.
func compatible(t *schema.Type, g reflect.Type, depth int) bool {
	if depth > 64 {
		return false
	}
	switch t.Kind {
	case schema.KindBool:
		return g.Kind() == reflect.Bool
	case schema.KindInt8:
		return g.Kind() == reflect.Int8
	case schema.KindInt16:
		return g.Kind() == reflect.Int16
	case schema.KindUint16:
		return g.Kind() == reflect.Uint16
	case schema.KindInt32:
		return g.Kind() == reflect.Int32
	case schema.KindUint32:
		return g.Kind() == reflect.Uint32
	case schema.KindInt64:
		return g.Kind() == reflect.Int64
	case schema.KindFloat64:
		return g.Kind() == reflect.Float64
	case schema.KindUUID:
		return g.Kind() == reflect.Array && g.Len() == 16 && g.Elem().Kind() == reflect.Uint8
	case schema.KindString:
		return g.Kind() == reflect.String || g.Kind() == reflect.Pointer && g.Elem().Kind() == reflect.String
	case schema.KindBytes, schema.KindRecords:
		return g.Kind() == reflect.Slice && g.Elem().Kind() == reflect.Uint8
	case schema.KindArray:
		return g.Kind() == reflect.Slice && t.Elem != nil && compatible(t.Elem, g.Elem(), depth+1)
	case schema.KindStruct:
		if g.Kind() == reflect.Pointer {
			g = g.Elem()
		}
		return g.Kind() == reflect.Struct && g != tagsType
	}
	return false
}

// defaulted returns a Go struct value of type gt after kmsg's Default.
func defaulted(gt reflect.Type) reflect.Value {
	p := reflect.New(gt)
	if d, ok := p.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return p.Elem()
}

// smallestFiller fills a kmsg value with manifester's smallest instance.
type smallestFiller struct {
	v        int16
	flexible bool
	// missing names spec fields on the wire that kmsg lacks.
	missing []string
}

// fillStruct fills the addressable struct gv, mapped by m: untagged fields
// at their smallest value (numbers zero even where the spec's default is
// not), tagged fields at kmsg's defaults.
func (sf *smallestFiller) fillStruct(gv reflect.Value, m *structMap, path string) {
	def := defaulted(m.gt)
	// Go fields the spec does not have (fields of newer Kafka releases)
	// take kmsg's defaults, so that kmsg does not write them as tags.
	paired := map[int]bool{}
	for _, gi := range m.gi {
		paired[gi] = true
	}
	for j := 0; j < gv.NumField(); j++ {
		if f := m.gt.Field(j); !paired[j] && f.IsExported() && f.Name != "Version" {
			gv.Field(j).Set(def.Field(j))
		}
	}
	for i, f := range m.s.Fields {
		gi := m.gi[i]
		if gi < 0 {
			if f.Versions.Contains(sf.v) && !(sf.flexible && f.IsTagged(sf.v)) {
				sf.missing = append(sf.missing, path+f.Name)
			}
			continue
		}
		fv := gv.Field(gi)
		// Tagged fields, and fields the version does not have, stay at
		// kmsg's defaults: kmsg writes a tagged field whenever it differs
		// from its default, without looking at the field's versions.
		if !f.Versions.Contains(sf.v) || sf.flexible && f.IsTagged(sf.v) {
			fv.Set(def.Field(gi))
			continue
		}
		sf.fillValue(fv, f.Type, m.sub[i], path+f.Name+".")
	}
}

func (sf *smallestFiller) fillValue(fv reflect.Value, t *schema.Type, sub *structMap, path string) {
	switch t.Kind {
	case schema.KindString:
		if fv.Kind() == reflect.Pointer {
			fv.Set(reflect.New(fv.Type().Elem()))
		} else {
			fv.SetString("")
		}
	case schema.KindBytes:
		fv.SetBytes([]byte{})
	case schema.KindRecords:
		fv.SetBytes(records.EmptyBatch())
	case schema.KindArray:
		s := reflect.MakeSlice(fv.Type(), 1, 1)
		sf.fillValue(s.Index(0), t.Elem, sub, path)
		fv.Set(s)
	case schema.KindStruct:
		if fv.Kind() == reflect.Pointer {
			fv.Set(reflect.New(fv.Type().Elem()))
			fv = fv.Elem()
		}
		sf.fillStruct(fv, sub, path)
	default:
		fv.SetZero()
	}
}

// responseFrame frames a kmsg response the way franz-go's kfake writes it
// (pkg/kfake client_conn.go): size, correlation id, an empty tagged-field
// section when the response is flexible and not ApiVersions (key 18,
// whose response header is always v0), then the body.
func responseFrame(key int16, flexible bool, corr int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if flexible && key != 18 {
		b = append(b, 0)
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// kmsgFrame is kmsg's whole frame of msg (of triple tr): a request as
// its formatter writes it (client id "", correlation id 0), a response as
// kfake does (see responseFrame).
func kmsgFrame(tr triple, msg kmsgMsg) []byte {
	req, ok := msg.(kmsg.Request)
	if !ok {
		return responseFrame(tr.api.Key, msg.IsFlexible(), 0, msg.AppendTo(nil))
	}
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("")).AppendRequest(nil, req, 0)
	if tr.api.Key == 7 && tr.v == 0 {
		// kmsg writes the v0 header (no client id) of ControlledShutdown
		// v0 and returns early, without the body or the size.
		frame = append(frame, msg.AppendTo(nil)...)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	}
	return frame
}

// kmsgHeaderVersion is the header version kmsg and kgo/kfake use: request
// v2 when flexible, v0 for ControlledShutdown v0, else v1; response v1
// when flexible and not ApiVersions, else v0.
func kmsgHeaderVersion(kind schema.MessageType, key, v int16, flexible bool) int16 {
	if kind == schema.TypeRequest {
		switch {
		case key == 7 && v == 0:
			return 0
		case flexible:
			return 2
		}
		return 1
	}
	if flexible && key != 18 {
		return 1
	}
	return 0
}

// TestKmsgSmallest builds the smallest instance of every 4.3 (api,
// version, kind) in kmsg and requires byte-identical bodies and frames, and
// that kmsg reads our bytes and writes them back unchanged.
func TestKmsgSmallest(t *testing.T) {
	rel := loadRelease(t, kmsgLabel)
	compared, skipped := compareSmallest(t, rel)
	t.Logf("%s: compared %d of %d (api, version, kind) triples with kmsg; skipped %d:", kmsgLabel, compared, len(triples(rel.reg)), len(skipped))
	for _, s := range skipped {
		t.Logf("  skipped %s", s)
	}
	if compared < minCompared {
		t.Errorf("only %d triples compared, want at least %d", compared, minCompared)
	}
}

// TestKmsgSmallestOtherReleases runs the same comparison for the other
// releases: this covers the 3.9-only request header v0 of ControlledShutdown
// v0 and the APIs 4.0 removed. Triples kmsg cannot build are skipped, but
// at least 90% of each release must be compared.
func TestKmsgSmallestOtherReleases(t *testing.T) {
	for _, label := range releaseLabels(t) {
		if label == kmsgLabel {
			continue
		}
		t.Run(label, func(t *testing.T) {
			rel := loadRelease(t, label)
			all := len(triples(rel.reg))
			compared, skipped := compareSmallest(t, rel)
			t.Logf("%s: compared %d of %d triples with kmsg; skipped %d:", label, compared, all, len(skipped))
			for _, s := range skipped {
				t.Logf("  skipped %s", s)
			}
			if compared*10 < all*9 {
				t.Errorf("only %d of %d triples compared", compared, all)
			}
		})
	}
}

// compareSmallest compares the smallest instances of every triple of rel
// with kmsg's, returning how many were compared and why the rest were not.
func compareSmallest(t *testing.T, rel *release) (compared int, skipped []string) {
	t.Helper()
	all := triples(rel.reg)
	for _, tr := range all {
		msg, why := kmsgMessage(tr)
		if msg == nil {
			skipped = append(skipped, fmt.Sprintf("%s: %s", tr, why))
			continue
		}
		m := tr.msg()
		if msg.IsFlexible() != m.IsFlexible(tr.v) {
			t.Errorf("%s: kmsg flexible=%v, spec flexible=%v", tr, msg.IsFlexible(), m.IsFlexible(tr.v))
			continue
		}
		gv := reflect.ValueOf(msg).Elem()
		sm := mapStruct(m.Body, gv.Type(), true)
		sf := &smallestFiller{v: tr.v, flexible: m.IsFlexible(tr.v)}
		sf.fillStruct(gv, sm, "")
		if len(sf.missing) > 0 {
			skipped = append(skipped, fmt.Sprintf("%s: kmsg has no field for %s", tr, strings.Join(sf.missing, ", ")))
			continue
		}
		compared++

		want := sample.Body(m, tr.v)
		ours, err := rel.c.EncodeBody(nil, m, tr.v, &want)
		if err != nil {
			t.Errorf("%s: encode: %v", tr, err)
			continue
		}
		theirs := msg.AppendTo(nil)
		if !bytes.Equal(ours, theirs) {
			if tr.api.Request.LatestVersionUnstable && tr.v == tr.api.Request.Valid.Hi {
				// An unreleased version may still change, and kmsg follows a
				// later layout (ReadShareGroupStateSummary v0 in 3.9/4.0
				// gained LeaderEpoch in 4.1).
				compared--
				skipped = append(skipped, fmt.Sprintf("%s: unstable in this release and laid out differently in kmsg (% x vs % x)", tr, ours, theirs))
				continue
			}
			t.Errorf("%s: bodies differ\n ours % x\nkmsg % x", tr, ours, theirs)
			continue
		}

		// kmsg reads our bytes and writes them back unchanged.
		back, _ := kmsgMessage(tr)
		if err := back.ReadFrom(ours); err != nil {
			t.Errorf("%s: kmsg cannot read our body: %v", tr, err)
		} else if again := back.AppendTo(nil); !bytes.Equal(again, ours) {
			t.Errorf("%s: kmsg re-encodes our body differently\n ours % x\nkmsg % x", tr, ours, again)
		}

		// Whole frames, header included.
		frame, err := sample.Encode(rel.c, tr.api, tr.kind, tr.v)
		if err != nil {
			t.Errorf("%s: encode frame: %v", tr, err)
			continue
		}
		kframe := kmsgFrame(tr, msg)
		if !bytes.Equal(frame, kframe) {
			t.Errorf("%s: frames differ\n ours % x\nkmsg % x", tr, frame, kframe)
		}
		if got, want := m.HeaderVersion(tr.v), kmsgHeaderVersion(tr.kind, tr.api.Key, tr.v, msg.IsFlexible()); got != want {
			t.Errorf("%s: header v%d, kmsg's rule gives v%d", tr, got, want)
		}
	}
	return compared, skipped
}

// TestKmsgTagOutsideItsVersions: kmsg writes a tagged field whenever it is
// not at its default, without looking at the field's versions. A Fetch v12
// request with a partition HighWatermark (tag 1, 18+ in the spec) is such
// a message; like Kafka ("Tag 1 is not valid for version 12"), our decoder
// must reject it with ErrTagVersion at the tag's offset and path.
func TestKmsgTagOutsideItsVersions(t *testing.T) {
	rel := loadRelease(t, kmsgLabel)
	api, _ := rel.reg.APIByName("Fetch")
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	topic := kmsg.NewFetchRequestTopic()
	part := kmsg.NewFetchRequestTopicPartition()
	part.HighWatermark = 7
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	body := req.AppendTo(nil)
	// The partition's tag section: 01 01 08 (one tag, tag 1, 8 bytes).
	at := bytes.Index(body, []byte{1, 1, 8})
	if at < 0 {
		t.Fatalf("kmsg did not write tag 1: % x", body)
	}
	_, _, err := rel.c.DecodeBody(api.Request, 12, body, codec.Options{Spans: true})
	var de *wire.DecodeError
	if !errors.Is(err, wire.ErrTagVersion) || !errors.As(err, &de) {
		t.Fatalf("decode error = %v, want ErrTagVersion", err)
	}
	if de.Offset != at+1 || !strings.Contains(de.Path, "Topics[0].Partitions[0]") {
		t.Errorf("error at offset %d path %q, want offset %d (the tag) under Topics[0].Partitions[0]", de.Offset, de.Path, at+1)
	}
	// At v18, where the tag is valid, the same value decodes.
	req.SetVersion(18)
	val, _, err := rel.c.DecodeBody(api.Request, 18, req.AppendTo(nil), codec.Options{})
	if err != nil {
		t.Fatalf("v18: %v", err)
	}
	hw := findField(api.Request.Body, "Topics", "Partitions", "HighWatermark")
	if got := val.Kids()[hw[0]].Kids()[0].Kids()[hw[1]].Kids()[0].Kids()[hw[2]].Int(); got != 7 {
		t.Errorf("v18 HighWatermark = %d, want 7", got)
	}
}

// findField returns the field indexes along a path of field names.
func findField(s *schema.Struct, names ...string) []int {
	var out []int
	for _, n := range names {
		for _, f := range s.Fields {
			if f.Name == n {
				out = append(out, f.Index)
				s = f.Type.ElemStruct()
				break
			}
		}
	}
	return out
}
