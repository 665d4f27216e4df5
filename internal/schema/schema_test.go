package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/testshared"
)

func TestParseVersions(t *testing.T) {
	cases := []struct {
		in   string
		want Versions
		err  string
	}{
		{"3", Versions{3, 3}, ""},
		{" 0-2 ", Versions{0, 2}, ""},
		{"2+", Versions{2, MaxVersion}, ""},
		{"none", None, ""},
		{"0-0", Versions{0, 0}, ""},
		{"32767", Versions{32767, 32767}, ""},
		{"", None, "empty"},
		{"3-1", None, "reversed"},
		{"-1", None, "not a non-negative integer"},
		{"1-", None, "not a non-negative integer"},
		{"a+", None, "not a non-negative integer"},
		{"32768", None, "out of range"},
		{"1.5", None, "not a non-negative integer"},
	}
	for _, c := range cases {
		got, err := ParseVersions(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseVersions(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseVersions(%q) error = %v, want one saying %q", c.in, err, c.err)
		}
	}
}

func TestVersionsOps(t *testing.T) {
	v := func(s string) Versions {
		r, err := ParseVersions(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := v("0+").Intersect(v("3-5")); got != v("3-5") {
		t.Errorf("0+ ∩ 3-5 = %v", got)
	}
	if got := v("0-2").Intersect(v("3+")); !got.Empty() || got.String() != "none" {
		t.Errorf("0-2 ∩ 3+ = %v, want none", got)
	}
	if got := v("12+").Intersect(v("0+")); got.String() != "12+" {
		t.Errorf("12+ ∩ 0+ = %v", got)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{"0+", "2+", true}, {"2+", "0+", false}, {"1-3", "2", true}, {"none", "none", true}, {"1-3", "none", true}, {"none", "1", false}} {
		if got := v(c.a).Covers(v(c.b)); got != c.want {
			t.Errorf("%s covers %s = %v", c.a, c.b, got)
		}
	}
	for _, s := range []string{"none", "3", "0-2", "4+"} {
		if got := v(s).String(); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
	if !v("4+").Open() || v("0-4").Open() || None.Open() {
		t.Error("Open is wrong")
	}
	if !v("1-3").Contains(1) || !v("1-3").Contains(3) || v("1-3").Contains(4) || None.Contains(0) {
		t.Error("Contains is wrong")
	}
}

// build parses one synthetic data message with the given fields JSON and
// returns its body or the error.
func build(t *testing.T, fields string) (*Struct, error) {
	t.Helper()
	src := `{"type": "data", "name": "Thing", "validVersions": "0-3", "flexibleVersions": "2+", "fields": [` + fields + `]}`
	f, err := spec.Parse("Thing.json", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	reg, err := Build([]*spec.File{f})
	if err != nil {
		return nil, err
	}
	m, _ := reg.Message("Thing")
	return m.Body, nil
}

func TestDefaults(t *testing.T) {
	cases := []struct {
		field string
		check func(d Default) bool
	}{
		{`{"name": "A", "type": "int32", "versions": "0+", "default": "-1"}`, func(d Default) bool { return d.Int == -1 }},
		{`{"name": "A", "type": "int32", "versions": "0+", "default": -2147483648}`, func(d Default) bool { return d.Int == -2147483648 }},
		{`{"name": "A", "type": "int64", "versions": "0+", "default": "0x7fffffffffffffff"}`, func(d Default) bool { return d.Int == 1<<63-1 }},
		{`{"name": "A", "type": "int16", "versions": "0+", "default": "0x10"}`, func(d Default) bool { return d.Int == 16 }},
		{`{"name": "A", "type": "uint16", "versions": "0+", "default": "65535"}`, func(d Default) bool { return d.Int == 65535 }},
		{`{"name": "A", "type": "uint32", "versions": "0+", "default": "4294967295"}`, func(d Default) bool { return d.Int == 4294967295 }},
		{`{"name": "A", "type": "bool", "versions": "0+", "default": "False"}`, func(d Default) bool { return d.Int == 0 }},
		{`{"name": "A", "type": "bool", "versions": "0+", "default": true}`, func(d Default) bool { return d.Int == 1 }},
		{`{"name": "A", "type": "float64", "versions": "0+", "default": "1.5"}`, func(d Default) bool { return d.Float == 1.5 }},
		{`{"name": "A", "type": "string", "versions": "0+", "default": "abc"}`, func(d Default) bool { return d.Str == "abc" && !d.Null }},
		{`{"name": "A", "type": "string", "versions": "0+", "nullableVersions": "0+", "default": "null"}`, func(d Default) bool { return d.Null }},
		// AAECAwQFBgcICQoLDA0ODw is base64url of bytes 0..15
		{`{"name": "A", "type": "uuid", "versions": "0+", "default": "AAECAwQFBgcICQoLDA0ODw"}`, func(d Default) bool { return d.UUID[1] == 1 && d.UUID[15] == 15 }},
		{`{"name": "A", "type": "[]int32", "versions": "0+", "nullableVersions": "0+", "default": null}`, func(d Default) bool { return d.Null }},
	}
	for _, c := range cases {
		body, err := build(t, c.field)
		if err != nil {
			t.Errorf("%s: %v", c.field, err)
			continue
		}
		if d := body.Fields[0].Default; !c.check(d) {
			t.Errorf("%s: default = %+v", c.field, d)
		}
	}
}

func TestBadDefaults(t *testing.T) {
	for _, field := range []string{
		`{"name": "A", "type": "int32", "versions": "0+", "default": "0xffffffff"}`, // does not fit the signed range
		`{"name": "A", "type": "int8", "versions": "0+", "default": "-129"}`,
		`{"name": "A", "type": "uint16", "versions": "0+", "default": "-1"}`,
		`{"name": "A", "type": "bool", "versions": "0+", "default": "yes"}`,
		`{"name": "A", "type": "float64", "versions": "0+", "default": "x"}`,
		`{"name": "A", "type": "uuid", "versions": "0+", "default": "short"}`,
		`{"name": "A", "type": "bytes", "versions": "0+", "default": "ab"}`,
		`{"name": "A", "type": "[]int8", "versions": "0+", "default": "x"}`,
		`{"name": "A", "type": "int32", "versions": "0+", "default": null}`,
		// null, but not nullable in every version of the field
		`{"name": "A", "type": "string", "versions": "0+", "nullableVersions": "1+", "default": null}`,
	} {
		_, err := build(t, field)
		if !errors.Is(err, ErrDefault) {
			t.Errorf("%s: err = %v, want ErrDefault", field, err)
		}
	}
}

func TestFieldChecks(t *testing.T) {
	cases := []struct {
		field string
		is    error
		says  string
	}{
		{`{"name": "A", "type": "[][]int8", "versions": "0+"}`, ErrType, "arrays of arrays"},
		{`{"name": "A", "type": "int8", "versions": "0+", "fields": []}`, ErrType, "cannot have fields"},
		{`{"name": "A", "type": "[]records", "versions": "0+"}`, ErrType, "arrays of records"},
		{`{"name": "A", "type": "records", "versions": "2+", "taggedVersions": "2+", "tag": 0}`, ErrTag, "records field cannot be tagged"},
		{`{"name": "A", "type": "int8", "versions": "2+", "taggedVersions": "2-3", "tag": 0}`, ErrTag, "open-ended"},
		{`{"name": "A", "type": "int8", "versions": "2+", "taggedVersions": "2+", "tag": -1}`, ErrTag, "negative"},
		{`{"name": "A", "type": "string", "versions": "2+", "taggedVersions": "2+", "tag": 0, "nullableVersions": "3+"}`, ErrTag, "all or none"},
		{`{"name": "A", "type": "int8", "versions": "0+", "zeroCopy": true}`, ErrType, "zeroCopy"},
		{`{"name": "A", "type": "int8", "versions": "0+", "entityType": "topicName"}`, ErrType, "needs a string"},
		{`{"name": "A", "type": "int8", "versions": "0+", "entityType": "planet"}`, ErrType, "unknown entityType"},
		{`{"name": "A", "type": "int8", "versions": "0+", "flexibleVersions": "none"}`, ErrVersions, "string or bytes"},
		{`{"name": "A", "type": "string", "versions": "0+", "flexibleVersions": "1+"}`, ErrVersions, "not within"},
		{`{"name": "A", "type": "int8"}`, ErrVersions, "no versions"},
		{`{"name": "a-b", "type": "int8", "versions": "0+"}`, ErrInvalidSpec, "invalid field name"},
		{`{"name": "A", "type": "lowercase", "versions": "0+"}`, ErrType, "can't parse type"},
	}
	for _, c := range cases {
		_, err := build(t, c.field)
		if !errors.Is(err, c.is) || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want %v saying %q", c.field, err, c.is, c.says)
		}
	}
}

// TestTaggedVersionsDefaultVersions: a field with only taggedVersions
// exists in exactly those versions.
func TestTaggedVersionsDefaultVersions(t *testing.T) {
	body, err := build(t, `{"name": "A", "type": "int8", "taggedVersions": "2+", "tag": 0}`)
	if err != nil {
		t.Fatal(err)
	}
	f := body.Fields[0]
	if f.Versions.String() != "2+" || f.Tag != 0 || !f.IsTagged(3) || f.IsTagged(1) || len(body.Tagged) != 1 {
		t.Errorf("field = %+v", f)
	}
}

func TestMessageChecks(t *testing.T) {
	cases := []struct {
		src string
		is  error
		pos string
	}{
		{`{"type": "request", "name": "XRequest", "apiKey": 1, "validVersions": "0+", "flexibleVersions": "none"}`, ErrVersions, "X.json:1:71"},
		{`{"type": "request", "name": "XRequest", "apiKey": 1, "flexibleVersions": "none"}`, ErrVersions, "X.json:1:1"},
		{`{"type": "request", "name": "XRequest", "apiKey": 1, "validVersions": "0"}`, ErrVersions, "X.json:1:1"},
		{`{"type": "request", "name": "X", "apiKey": 1, "validVersions": "0", "flexibleVersions": "none"}`, ErrInvalidSpec, "X.json:1:29"},
		{`{"type": "request", "name": "XRequest", "validVersions": "0", "flexibleVersions": "none"}`, ErrAPIKey, "X.json:1:1"},
		{`{"type": "request", "name": "XRequest", "apiKey": 40000, "validVersions": "0", "flexibleVersions": "none"}`, ErrAPIKey, "X.json:1:51"},
		{`{"type": "gadget", "name": "X", "validVersions": "0", "flexibleVersions": "none"}`, ErrInvalidSpec, "X.json:1:10"},
		{`{"type": "response", "name": "XResponse", "apiKey": 1, "listeners": ["broker"], "validVersions": "0", "flexibleVersions": "none"}`, ErrInvalidSpec, "X.json:1:70"},
		{`{"type": "request", "name": "XRequest", "apiKey": 1, "listeners": ["moon"], "validVersions": "0", "flexibleVersions": "none"}`, ErrInvalidSpec, "X.json:1:68"},
		{`{"type": "coordinator-key", "name": "XKey", "apiKey": 1, "validVersions": "0-1", "flexibleVersions": "none"}`, ErrVersions, "X.json:1:75"},
		{`{"type": "data", "name": "XData", "validVersions": "0", "flexibleVersions": "none", "headerVersions": 7}`, ErrHeaderVersions, "X.json:1:103"},
		{`{"type": "data", "name": "X", "validVersions": "0", "flexibleVersions": "none", "commonStructs": [{"name": "s", "versions": "0+"}]}`, ErrType, "X.json:1:108"},
		{`{"type": "data", "name": "X", "validVersions": "0", "flexibleVersions": "none", "commonStructs": [{"name": "S", "versions": "0+"}, {"name": "S", "versions": "0+"}]}`, ErrDuplicate, "X.json:1:141"},
		{`{"type": "data", "name": "X", "validVersions": "0", "flexibleVersions": "none", "commonStructs": [{"name": "S", "versions": "0+"}], "fields": [{"name": "A", "type": "S", "versions": "0+", "fields": []}]}`, ErrDuplicate, "X.json:1:166"},
		{`{"type": "data", "name": "X", "validVersions": "0", "flexibleVersions": "none", "fields": [{"name": "A", "type": "S", "versions": "0+", "fields": []}, {"name": "B", "type": "S", "versions": "0+", "fields": []}]}`, ErrDuplicate, "X.json:1:174"},
	}
	for _, c := range cases {
		f, err := spec.Parse("X.json", []byte(c.src))
		if err != nil {
			t.Fatalf("parse %s: %v", c.src, err)
		}
		_, err = Build([]*spec.File{f})
		var list spec.ErrorList
		if !errors.As(err, &list) || !errors.Is(err, c.is) || list[0].Pos.String() != c.pos {
			t.Errorf("%s:\n err = %v, want %v at %s", c.src, err, c.is, c.pos)
		}
	}
}

// TestReservedKey: validVersions "none" only reserves the key; the rest of
// the file is ignored.
func TestReservedKey(t *testing.T) {
	var files []*spec.File
	for _, s := range []string{
		`{"type": "request", "name": "OldRequest", "apiKey": 4, "validVersions": "none", "fields": [{"name": "x", "type": "junk"}]}`,
		`{"type": "response", "name": "OldResponse", "apiKey": 4, "validVersions": "none"}`,
	} {
		f, err := spec.Parse("F.json", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	reg, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := reg.API(4)
	if !ok || !a.Reserved() || a.Name != "Old" {
		t.Errorf("API 4 = %+v", a)
	}
}

func TestHeaderVersionDerived(t *testing.T) {
	reg, err := Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		api       string
		v         int16
		req, resp int16
	}{
		{"Produce", 8, 1, 0},
		{"Produce", 9, 2, 1},
		{"ApiVersions", 2, 1, 0},
		{"ApiVersions", 3, 2, 0}, // the response header of ApiVersions is always v0
		{"ApiVersions", 4, 2, 0},
		{"SaslHandshake", 1, 1, 0}, // never flexible
		{"OffsetDelete", 0, 1, 0},
		{"AlterPartitionReassignments", 0, 2, 1}, // flexible from v0
	}
	for _, c := range cases {
		a, err := reg.Lookup(c.api)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Request.HeaderVersion(c.v); got != c.req {
			t.Errorf("%s v%d request header v%d, want v%d", c.api, c.v, got, c.req)
		}
		if got := a.Response.HeaderVersion(c.v); got != c.resp {
			t.Errorf("%s v%d response header v%d, want v%d", c.api, c.v, got, c.resp)
		}
	}
	// 3.9 still has ControlledShutdown v0, whose request header is v0.
	reg39, err := Load(testshared.Spec(t, "3.9"))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := reg39.API(7)
	if got := cs.Request.HeaderVersion(0); got != 0 {
		t.Errorf("3.9 ControlledShutdown v0 request header v%d, want v0", got)
	}
	if got := cs.Request.HeaderVersion(1); got != 1 {
		t.Errorf("3.9 ControlledShutdown v1 request header v%d, want v1", got)
	}
}

func TestLookup(t *testing.T) {
	reg, err := Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"AlterConfigs", "alterconfigs", " ALTERCONFIGS ", "33", "AlterConfigsRequest", "AlterConfigsResponse",
		"ALTER_CONFIGS", "alter-configs", "Alter Configs", "alter_configs_request", "ALTER_CONFIGS_RESPONSE"} {
		a, err := reg.Lookup(s)
		if err != nil || a.Key != 33 {
			t.Errorf("Lookup(%q) = %v, %v", s, a, err)
		}
	}
	for _, c := range []struct {
		in      string
		suggest string
	}{
		{"AlterConfig", "AlterConfigs"},
		{"Fetc", "Fetch"},
		{"heartbeet", "Heartbeat"},
		{"999", ""},
		{"-1", ""},
		{"Zzzzzzzzzzzzzzzz", ""},
	} {
		_, err := reg.Lookup(c.in)
		if !errors.Is(err, ErrUnknownAPI) {
			t.Errorf("Lookup(%q) err = %v, want ErrUnknownAPI", c.in, err)
			continue
		}
		if c.suggest != "" && !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), c.suggest) {
			t.Errorf("Lookup(%q) err = %v, want a suggestion of %s", c.in, err, c.suggest)
		}
		if c.suggest == "" && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("Lookup(%q) suggests something: %v", c.in, err)
		}
	}
}

// TestTaggedSorted: every struct's Tagged list is sorted by tag, 0..n-1.
func TestTaggedSorted(t *testing.T) {
	reg, err := Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range reg.Messages {
		structs := append([]*Struct{m.Body}, m.Structs...)
		for _, s := range structs {
			for i, f := range s.Tagged {
				n++
				if f.Tag != int32(i) {
					t.Errorf("%s.%s: Tagged[%d] has tag %d", m.Name, s.Name, i, f.Tag)
				}
			}
		}
	}
	if n != 25 { // grep -o '"tag":' ../shared/kafka-spec/4.3/*.json | wc -l
		t.Errorf("%d tagged fields in 4.3, want 25", n)
	}
}
