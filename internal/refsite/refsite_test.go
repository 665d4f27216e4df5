package refsite

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testshared"
)

var spec43 = testshared.SpecPath("4.3")

var (
	once   sync.Once
	built  *site.Site
	reg43  *schema.Registry
	errBld error
)

// site43 builds the 4.3 site with this extension once for all tests.
func site43(t *testing.T) (*site.Site, *schema.Registry) {
	t.Helper()
	testshared.Dir(t)
	once.Do(func() {
		reg43, errBld = schema.Load(spec43)
		if errBld != nil {
			return
		}
		built, errBld = site.Build(site.Options{Releases: []*release.Release{{Label: "4.3", Codec: codec.New(reg43)}},
			Extensions: []site.Extension{Extension()}})
	})
	if errBld != nil {
		t.Fatal(errBld)
	}
	return built, reg43
}

func TestErrorCodesMatchKerr(t *testing.T) {
	codes := ErrorCodes()
	if len(codes) < 100 {
		t.Fatalf("only %d error codes", len(codes))
	}
	seen := map[int16]bool{}
	for i, c := range codes {
		if i > 0 && codes[i-1].Code >= c.Code {
			t.Fatalf("codes not strictly ascending at %d: %d then %d", i, codes[i-1].Code, c.Code)
		}
		seen[c.Code] = true
		if c.Code == 0 {
			if c.Name != "NONE" || c.Retriable {
				t.Errorf("code 0 = %+v", c)
			}
			continue
		}
		e := kerr.ErrorForCode(c.Code).(*kerr.Error)
		name, formerly := e.Message, ""
		if c.Code == 6 { // renamed by Kafka; kerr keeps the earlier name
			name, formerly = "NOT_LEADER_OR_FOLLOWER", e.Message
		}
		if name != c.Name || formerly != c.Formerly || e.Retriable != c.Retriable || e.Description != c.Description {
			t.Errorf("code %d: %+v, kerr has %+v", c.Code, c, e)
		}
		if got := ErrorHref(c.Code); got != ErrorsPath+"#"+c.Name {
			t.Errorf("ErrorHref(%d) = %q", c.Code, got)
		}
	}
	for _, want := range []int16{-1, 0, 3, 6, 35, 58} {
		if !seen[want] {
			t.Errorf("code %d missing", want)
		}
	}
	// A code kerr does not know has no entry and no link.
	if ErrorHref(30000) != "" {
		t.Errorf("ErrorHref(30000) = %q", ErrorHref(30000))
	}
}

// TestPrimitiveTypesSmallestEncodings checks every smallest encoding on
// the types page against franz-go's kbin, an independent implementation.
func TestPrimitiveTypesSmallestEncodings(t *testing.T) {
	want := map[string][]byte{
		"BOOLEAN":                 kbin.AppendBool(nil, false),
		"INT8":                    kbin.AppendInt8(nil, 0),
		"INT16":                   kbin.AppendInt16(nil, 0),
		"UINT16":                  kbin.AppendUint16(nil, 0),
		"INT32":                   kbin.AppendInt32(nil, 0),
		"UINT32":                  kbin.AppendUint32(nil, 0),
		"INT64":                   kbin.AppendInt64(nil, 0),
		"FLOAT64":                 kbin.AppendFloat64(nil, 0),
		"UUID":                    kbin.AppendUuid(nil, [16]byte{}),
		"UNSIGNED_VARINT":         kbin.AppendUvarint(nil, 0),
		"VARINT":                  kbin.AppendVarint(nil, 0),
		"VARLONG":                 kbin.AppendVarlong(nil, 0),
		"STRING":                  kbin.AppendString(nil, ""),
		"COMPACT_STRING":          kbin.AppendCompactString(nil, ""),
		"NULLABLE_STRING":         kbin.AppendNullableString(nil, nil),
		"COMPACT_NULLABLE_STRING": kbin.AppendCompactNullableString(nil, nil),
		"BYTES":                   kbin.AppendBytes(nil, []byte{}),
		"COMPACT_BYTES":           kbin.AppendCompactBytes(nil, []byte{}),
		"NULLABLE_BYTES":          kbin.AppendNullableBytes(nil, nil),
		"COMPACT_NULLABLE_BYTES":  kbin.AppendCompactNullableBytes(nil, nil),
		"RECORDS":                 kbin.AppendNullableBytes(nil, nil),
		"COMPACT_RECORDS":         kbin.AppendCompactNullableBytes(nil, nil),
		"ARRAY":                   kbin.AppendArrayLen(nil, 0),
		"COMPACT_ARRAY":           kbin.AppendCompactArrayLen(nil, 0),
		"TAGGED_FIELDS":           kbin.AppendUvarint(nil, 0),
	}
	types := PrimitiveTypes()
	if len(types) != len(want) {
		t.Errorf("%d types, want %d", len(types), len(want))
	}
	for _, ty := range types {
		w, ok := want[ty.Name]
		if !ok {
			t.Errorf("unexpected type %s", ty.Name)
			continue
		}
		if !bytes.Equal(ty.Bytes, w) {
			t.Errorf("%s: smallest encoding % x, kbin writes % x", ty.Name, ty.Bytes, w)
		}
		if len(ty.Hex()) != len(ty.Bytes) {
			t.Errorf("%s: %d hex cells for %d bytes", ty.Name, len(ty.Hex()), len(ty.Bytes))
		}
	}
}

// TestHeaderRangesRoundTrip parses every API's header table back and
// compares it with the header version of every single version.
func TestHeaderRangesRoundTrip(t *testing.T) {
	_, reg := site43(t)
	for _, api := range reg.APIs {
		if api.Reserved() {
			continue
		}
		for _, m := range []*schema.Message{api.Request, api.Response} {
			text := headerRanges(m)
			got := map[int16]int16{}
			for _, part := range strings.Split(text, ", ") {
				r, h, ok := strings.Cut(part, ": ")
				if !ok {
					t.Fatalf("%s: bad part %q in %q", m.Name, part, text)
				}
				vs, err := schema.ParseVersions(strings.ReplaceAll(strings.ReplaceAll(r, "v", ""), " ", ""))
				if err != nil {
					t.Fatalf("%s: %q: %v", m.Name, part, err)
				}
				hv := int16(h[0] - '0')
				for v := vs.Lo; v <= vs.Hi; v++ {
					if _, dup := got[v]; dup {
						t.Fatalf("%s: v%d listed twice in %q", m.Name, v, text)
					}
					got[v] = hv
				}
			}
			for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
				if got[v] != m.HeaderVersion(v) {
					t.Errorf("%s v%d: table says header %d, schema %d (%q)", m.Name, v, got[v], m.HeaderVersion(v), text)
				}
			}
			if len(got) != int(m.Valid.Hi-m.Valid.Lo)+1 {
				t.Errorf("%s: %q covers %d versions, want %d", m.Name, text, len(got), m.Valid.Hi-m.Valid.Lo+1)
			}
		}
	}
	// ApiVersions responses are pinned to header v0 whatever their version.
	api, _ := reg.APIByName("ApiVersions")
	if got, want := headerRanges(api.Response), "v0-v"+itoa(api.Response.Valid.Hi)+": 0"; got != want {
		t.Errorf("ApiVersions response: %q, want %q", got, want)
	}
}

func itoa(v int16) string { return strconv.Itoa(int(v)) }

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"ResourceName": "resource_name", "TopicID": "topic_id", "ThrottleTimeMs": "throttle_time_ms",
		"V2Field": "v2_field", "ID": "id", "x": "x", "ClientIDSuffix": "client_id_suffix",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGrammarEveryType checks the grammar of the synthetic every-type spec
// (testdata, written for this project) production by production.
func TestGrammarEveryType(t *testing.T) {
	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	for _, api := range reg.APIs {
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			g := Grammar(api.Name, "Request", api.Request, v)
			checkGrammar(t, api.Request, v, g)
		}
	}
}

// TestGrammarAllAPIs checks the structure of every grammar of Kafka 4.3:
// every non-tagged field of every struct at the version has exactly one
// production under its parent, arrays are bracketed, COMPACT_ exactly in
// flexible versions, _tagged_fields exactly in flexible versions.
func TestGrammarAllAPIs(t *testing.T) {
	_, reg := site43(t)
	n := 0
	for _, api := range reg.APIs {
		if api.Reserved() {
			continue
		}
		for _, m := range []*schema.Message{api.Request, api.Response} {
			for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
				checkGrammar(t, m, v, Grammar(api.Name, "X", m, v))
				n++
			}
		}
	}
	if n < 600 {
		t.Errorf("only %d grammars checked", n)
	}
}

func checkGrammar(t *testing.T, m *schema.Message, v int16, g []Production) {
	t.Helper()
	if len(g) == 0 {
		t.Fatalf("%s v%d: no grammar", m.Name, v)
	}
	if !strings.HasSuffix(g[0].Name, "(Version: "+itoa(v)+")") {
		t.Errorf("%s v%d: head %q", m.Name, v, g[0].Name)
	}
	flex := m.IsFlexible(v)
	i := 1
	var check func(s *schema.Struct, rhs string, depth int)
	check = func(s *schema.Struct, rhs string, depth int) {
		var want []string
		for _, f := range s.Fields {
			if !f.Versions.Contains(v) || f.IsTagged(v) {
				continue
			}
			name := SnakeCase(f.Name)
			if f.Type.Kind == schema.KindArray {
				want = append(want, "["+name+"]")
			} else {
				want = append(want, name)
			}
		}
		if flex {
			want = append(want, "_tagged_fields")
		}
		if len(want) == 0 {
			want = []string{"(empty)"}
		}
		if got := strings.Fields(rhs); !slices.Equal(got, want) {
			t.Errorf("%s v%d: rhs %q, want %q", m.Name, v, rhs, want)
		}
		for _, f := range s.Fields {
			if !f.Versions.Contains(v) || f.IsTagged(v) {
				continue
			}
			if i >= len(g) {
				t.Errorf("%s v%d: grammar ends before %s", m.Name, v, f.Name)
				return
			}
			p := g[i]
			i++
			if p.Name != SnakeCase(f.Name) || p.Depth != depth {
				t.Errorf("%s v%d: production %d is %q at depth %d, want %q at %d", m.Name, v, i-1, p.Name, p.Depth, SnakeCase(f.Name), depth)
			}
			if st := f.Type.ElemStruct(); st != nil {
				check(st, p.RHS, depth+1)
				continue
			}
			kind := f.Type.Kind
			if kind == schema.KindArray {
				kind = f.Type.Elem.Kind
			}
			lengthPrefixed := kind == schema.KindString || kind == schema.KindBytes || kind == schema.KindRecords
			if wantCompact := lengthPrefixed && f.IsCompact(m.Flexible, v); wantCompact != strings.HasPrefix(p.RHS, "COMPACT_") {
				t.Errorf("%s v%d: %s => %s (compact %v)", m.Name, v, p.Name, p.RHS, f.IsCompact(m.Flexible, v))
			}
			if strings.Contains(p.RHS, "NULLABLE") != (f.IsNullable(v) && f.Type.Kind != schema.KindArray && kind != schema.KindRecords) {
				t.Errorf("%s v%d: %s => %s, nullable %v", m.Name, v, p.Name, p.RHS, f.IsNullable(v))
			}
		}
	}
	check(m.Body, g[0].RHS, 1)
	if i != len(g) {
		t.Errorf("%s v%d: %d productions, %d checked", m.Name, v, len(g), i)
	}
}

// TestGrammarHTMLMatchesTemplate checks that the Go writer of an API
// page's grammar section gives the bytes of the "grammar" template: for
// every grammar of Kafka 4.3 and of the synthetic specs, for empty
// halves, and for hostile names and right-hand sides.
func TestGrammarHTMLMatchesTemplate(t *testing.T) {
	check := func(name string, gv *grammarView) {
		t.Helper()
		want, err := render("grammar", gv)
		if err != nil {
			t.Fatal(err)
		}
		if got := grammarHTML(gv); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
		}
	}
	hostile := []string{"", "<script>alert(1)</script>", `a"b'c&d<e>f+g`, "nul\x00", "bad \xff utf8", "javascript:alert(1)"}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		p := []Production{{Depth: i, Name: s, RHS: u}, {Depth: 1, Name: u, RHS: s}}
		check("hostile "+s, &grammarView{Request: p, Response: p[:1]})
		check("hostile request "+s, &grammarView{Request: p})
		check("hostile response "+s, &grammarView{Response: p})
	}
	check("empty", &grammarView{})
	regs := map[string]*schema.Registry{}
	for _, dir := range []string{"everytype", "headerv3"} {
		reg, err := schema.Load("../../testdata/specs/" + dir)
		if err != nil {
			t.Fatal(err)
		}
		regs[dir] = reg
	}
	_, regs["4.3"] = site43(t)
	n := 0
	for label, reg := range regs {
		for _, api := range reg.APIs {
			if api.Reserved() {
				continue
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				check(label+" "+api.Name+" v"+itoa(v), &grammarView{Request: Grammar(api.Name, "Request", api.Request, v),
					Response: Grammar(api.Name, "Response", api.Response, v)})
				n++
			}
		}
	}
	if n < 300 {
		t.Errorf("only %d grammars compared", n)
	}
}
