package jsonvalue

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

func load(t testing.TB, rel string) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(testshared.Spec(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(reg)
}

// TestRoundTripAll converts the smallest instance of every body of every
// API and version of every release (3.9 to 4.3 and trunk) to JSON and back, and checks that the result encodes to
// the same bytes and prints the same JSON again.
func TestRoundTripAll(t *testing.T) {
	for _, rel := range []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"} {
		c := load(t, rel)
		n := 0
		for _, api := range c.Reg.APIs {
			if api.Reserved() {
				continue
			}
			for _, m := range []*schema.Message{api.Request, api.Response} {
				for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
					body := sample.Body(m, v)
					want, err := c.EncodeBody(nil, m, v, &body)
					if err != nil {
						t.Fatalf("%s v%d: %v", m.Name, v, err)
					}
					js, err := Marshal(m, v, &body)
					if err != nil {
						t.Fatalf("%s v%d: Marshal: %v", m.Name, v, err)
					}
					if !json.Valid(js) {
						t.Fatalf("%s v%d: invalid JSON %s", m.Name, v, js)
					}
					back, err := Unmarshal(m, v, js)
					if err != nil {
						t.Fatalf("%s v%d: Unmarshal(%s): %v", m.Name, v, js, err)
					}
					got, err := c.EncodeBody(nil, m, v, &back)
					if err != nil {
						t.Fatalf("%s v%d: encoding the JSON: %v", m.Name, v, err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s v%d: bytes differ after JSON\nwant %x\n got %x", m.Name, v, want, got)
					}
					js2, _ := Marshal(m, v, &back)
					if !bytes.Equal(js, js2) {
						t.Errorf("%s v%d: JSON not stable:\n%s\n%s", m.Name, v, js, js2)
					}
					n++
				}
			}
		}
		if n < 500 {
			t.Errorf("%s: only %d bodies checked", rel, n)
		}
	}
}

// TestAgainstKmsg checks JSON -> bytes and bytes -> JSON against franz-go's
// kmsg, an independent encoder, for a CreateTopics request with every kind
// of value in it.
func TestAgainstKmsg(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("CreateTopics")
	for _, v := range []int16{4, 5, 7} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = v
		req.TimeoutMillis = 30000
		req.ValidateOnly = true
		topic := kmsg.NewCreateTopicsRequestTopic()
		topic.Topic = "orders"
		topic.NumPartitions = -1
		topic.ReplicationFactor = 3
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition = 0
		ra.Replicas = []int32{1, 2, 3}
		topic.ReplicaAssignment = append(topic.ReplicaAssignment, ra)
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name = "cleanup.policy"
		cfg.Value = nil // null
		topic.Configs = append(topic.Configs, cfg)
		req.Topics = append(req.Topics, topic)
		want := req.AppendTo(nil)

		js := `{"Topics":[{"Name":"orders","NumPartitions":-1,"ReplicationFactor":3,
			"Assignments":[{"PartitionIndex":0,"BrokerIds":[1,2,3]}],
			"Configs":[{"Name":"cleanup.policy","Value":null}]}],
			"timeoutMs":30000,"validateOnly":true}`
		val, err := Unmarshal(api.Request, v, []byte(js))
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		got, err := c.EncodeBody(nil, api.Request, v, &val)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("v%d: JSON encodes to\n%x\nkmsg gives\n%x", v, got, want)
		}
		dec, _, err := c.DecodeBody(api.Request, v, want, codec.Options{})
		if err != nil {
			t.Fatalf("v%d: decoding kmsg's bytes: %v", v, err)
		}
		out, err := Marshal(api.Request, v, &dec)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(out, &a)
		_ = json.Unmarshal([]byte(js), &b)
		if diff := gocmp.Diff(b, a); diff != "" {
			t.Errorf("v%d: JSON of kmsg's bytes differs (-want +got):\n%s", v, diff)
		}
	}
}

// TestValueForms covers uuids, unknown tags, non-UTF-8 strings, floats and
// bytes.
func TestValueForms(t *testing.T) {
	c := load(t, "4.3")
	// DescribeClientQuotas response v1 has float64 values.
	api, _ := c.Reg.Lookup("DescribeClientQuotas")
	js := `{"ThrottleTimeMs":0,"ErrorCode":0,"ErrorMessage":null,"Entries":[{"Entity":[{"EntityType":"user","EntityName":{"hex":"ff00"}}],"Values":[{"Key":"k","Value":"Infinity"},{"Key":"k2","Value":1.5}]}],"_unknown_tags":[{"tag":9,"data":"0102"},{"tag":3,"data":""}]}`
	val, err := Unmarshal(api.Response, 1, []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.EncodeBody(nil, api.Response, 1, &val)
	if err != nil {
		t.Fatal(err)
	}
	dec, _, err := c.DecodeBody(api.Response, 1, b, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dec.Unknown()) != 2 || dec.Unknown()[0].Tag != 3 || dec.Unknown()[1].Tag != 9 {
		t.Errorf("unknown tags after the wire: %+v (want 3 then 9)", dec.Unknown())
	}
	out, err := Marshal(api.Response, 1, &dec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"EntityName":{"hex":"ff00"}`, `"Value":"Infinity"`, `"Value":1.5`, `"_unknown_tags":[{"tag":3,"data":""},{"tag":9,"data":"0102"}]`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}

	for in, want := range map[string]string{
		"01234567-89ab-cdef-0123-456789abcdef": "0123456789abcdef0123456789abcdef",
		"0123456789ABCDEF0123456789ABCDEF":     "0123456789abcdef0123456789abcdef",
		"ASNFZ4mrze8BI0VniavN7w":               "0123456789abcdef0123456789abcdef",
	} {
		b, err := ParseUUID(in)
		if err != nil || !bytes.Equal(b, mustHex(want)) {
			t.Errorf("ParseUUID(%q) = %x, %v", in, b, err)
		}
	}
	if _, err := ParseUUID("xyz"); err == nil {
		t.Error("ParseUUID(xyz) succeeded")
	}
}

func mustHex(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		b[i] = hexNib(s[2*i])<<4 | hexNib(s[2*i+1])
	}
	return b
}

func hexNib(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func TestDefaults(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("CreateTopics")
	val, err := Unmarshal(api.Request, 7, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	// timeoutMs defaults to 60000 in the spec; kmsg agrees.
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	want := req.AppendTo(nil)
	got, err := c.EncodeBody(nil, api.Request, 7, &val)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("empty JSON encodes to %x, kmsg's defaults give %x", got, want)
	}
}

func TestErrors(t *testing.T) {
	c := load(t, "4.3")
	ct, _ := c.Reg.Lookup("CreateTopics")
	for _, tc := range []struct {
		v     int16
		in    string
		cause error
		text  string
	}{
		{7, `{"Topics":[{"Nmae":"x"}]}`, ErrUnknownField, `CreateTopicsRequest.Topics[0].Nmae: unknown field: CreatableTopic has no field "Nmae"`},
		{7, `{"topics":[]}`, ErrUnknownField, `did you mean "Topics"?`},
		{0 + 2, `{"validateOnly":true}`, nil, ""},
		{7, `{"timeoutMs":"soon"}`, ErrType, "CreateTopicsRequest.timeoutMs: wrong JSON type: want an integer, got a string"},
		{7, `{"timeoutMs":2147483648}`, ErrRange, "2147483648 is not an int32 (-2147483648..2147483647)"},
		{7, `{"timeoutMs":1.5}`, ErrRange, "1.5 is not an int32 (it has a fraction)"},
		{7, `{"timeoutMs":1.0000000000000000001e3}`, ErrRange, "it has a fraction"},
		{7, `{"timeoutMs":2.5e9}`, ErrRange, "2500000000 is not an int32"},
		{7, `{"timeoutMs":1e999999999999999999999}`, ErrRange, "1e999999999999999999999 is not an int32 (beyond int64)"},
		{7, `{"timeoutMs":123456789012345678901}`, ErrRange, "is not an int32 (beyond int64)"},
		{7, `{"Topics":null}`, ErrNull, "CreateTopicsRequest.Topics: null"},
		{7, `{"Topics":[{"Name":null}]}`, ErrNull, "Topics[0].Name"},
		{7, `{"Topics":[{"Assignments":[{"BrokerIds":[null]}]}]}`, ErrNull, "BrokerIds[0]"},
		{7, "{\n  \"Topics\": [,]\n}", ErrSyntax, "line 2, column 14"},
		{7, `{} {}`, ErrSyntax, "data after the JSON object"},
		{7, `{"Topics":[{"Configs":[{"Value":{"hex":"zz"}}]}]}`, ErrType, "Configs[0].Value.hex"},
		{7, `{"_unknown_tags":[{"tag":-1,"data":""}]}`, ErrRange, "_unknown_tags[0].tag"},
		{7, `[]`, ErrType, "want an object, got an array"},
		// A key given twice in one object, at its path and position;
		// the same key in two objects is fine.
		{7, `{"Topics":[],"Topics":[]}`, ErrDuplicate, `CreateTopicsRequest.Topics: JSON syntax error: duplicate key "Topics" at line 1, column 14`},
		{7, "{\"Topics\":[{\"Name\":\"a\"},{\"Name\":\"b\",\n \"Name\":\"c\"}]}", ErrDuplicate, `CreateTopicsRequest.Topics[1].Name: JSON syntax error: duplicate key "Name" at line 2, column 2`},
		{7, `{"Topics":[], "\u0054opics":[]}`, ErrDuplicate, `duplicate key "Topics" at line 1, column 15`},
		{7, `{"_unknown_tags":[{"tag":1,"data":"","tag":2}]}`, ErrDuplicate, `CreateTopicsRequest._unknown_tags[0].tag: JSON syntax error: duplicate key "tag"`},
		{7, `{"Topics":[{"Name":"a"},{"Name":"b"}],"timeoutMs":5}`, nil, ""},
	} {
		_, err := Unmarshal(ct.Request, tc.v, []byte(tc.in))
		if tc.cause == nil {
			if err != nil {
				t.Errorf("Unmarshal(%s): %v", tc.in, err)
			}
			continue
		}
		var je *Error
		if !errors.Is(err, tc.cause) || !errors.As(err, &je) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("Unmarshal(%s) = %v; want %v containing %q", tc.in, err, tc.cause, tc.text)
		}
	}
	// Nesting deeper than encoding/json allows is refused, not recursed
	// into (and at the limit's depth, not past it).
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	if _, err := Unmarshal(ct.Request, 7, []byte(`{"Topics":`+deep+`}`)); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "nested more than 10000 deep") {
		t.Errorf("deep nesting: %v", err)
	}
	// A field that exists, but not at this version.
	_, err := Unmarshal(ct.Request, 0+2, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	api, _ := c.Reg.Lookup("Metadata")
	_, err = Unmarshal(api.Request, 3, []byte(`{"AllowAutoTopicCreation":false}`))
	if !errors.Is(err, ErrNotInVersion) || !strings.Contains(err.Error(), "MetadataRequest.AllowAutoTopicCreation") {
		t.Errorf("got %v, want ErrNotInVersion naming the path", err)
	}
}

// checkInteger compares parseInteger(s) with math/big's exact reading of
// s: an integer within int64 is read as that integer, anything else is
// refused.
func checkInteger(t *testing.T, s string) {
	t.Helper()
	got, err := parseInteger(s)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("math/big cannot read %s", s)
	}
	want := r.IsInt() && r.Num().IsInt64()
	if want != (err == nil) || want && got != r.Num().Int64() {
		t.Errorf("parseInteger(%s) = %d, %v; math/big reads %s", s, got, err, r.RatString())
	}
}

// TestIntegerForms: an integer is read from any JSON form of it, exactly,
// as math/big reads the same text; a number that is not an integer, or
// not an int64, is refused.
func TestIntegerForms(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "7", "-7", "1e3", "1E3", "1e+3", "1000.0", "1.5e3", "-2.50e1", "0.0", "0e0", "0e99999",
		"9223372036854775807", "-9223372036854775808", "9.223372036854775807e18", "-9223372036854775808.000",
		"9223372036854775808", "-9223372036854775809", "1e19", "1.5", "-0.5", "1e-1", "10e-1", "100e-2", "123e-2",
		"1.0000000000000000001e3", "5e-324", "1e18", "0.000001e6", "12345678901234567890e-1",
		"-1e100000",
		"1" + strings.Repeat("0", 2000) + "e-2000", "0." + strings.Repeat("0", 2000) + "1e2001",
	} {
		checkInteger(t, s)
	}
	// Exponents beyond int64, which math/big does not read.
	for s, want := range map[string]bool{"1e999999999999999999999": false, "1e-999999999999999999999": false, "0e-999999999999999999999": true, "0e999999999999999999999": true} {
		if got, err := parseInteger(s); (err == nil) != want || got != 0 {
			t.Errorf("parseInteger(%s) = %d, %v; want an integer: %v", s, got, err, want)
		}
	}
}

// FuzzIntegerForms writes numbers in JSON's grammar from the fuzzer's
// parts (sign, digits before and after a point, an exponent) and checks
// parseInteger against math/big's exact reading of the same text.
func FuzzIntegerForms(f *testing.F) {
	f.Add(false, "1", "", int16(3))
	f.Add(true, "9223372036854775808", "", int16(0))
	f.Add(false, "1", "50", int16(1))
	f.Add(false, "0", "0001", int16(4))
	f.Fuzz(func(t *testing.T, neg bool, whole, frac string, exp int16) {
		digits := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r < '0' || r > '9' {
					return -1
				}
				return r
			}, s)
		}
		whole, frac = strings.TrimLeft(digits(whole), "0"), digits(frac)
		if whole == "" {
			whole = "0"
		}
		s := whole
		if neg {
			s = "-" + s
		}
		if frac != "" {
			s += "." + frac
		}
		if exp != 0 {
			s += "e" + strconv.Itoa(int(exp%400))
		}
		checkInteger(t, s)
	})
}

// TestTextNotUTF8: a JSON string with bytes that are not UTF-8, or with a
// \u escape of half a surrogate pair, is refused at its path, line and
// column; encoding/json would put U+FFFD in its place silently. A real
// U+FFFD, written or escaped, and escaped pairs are text like any other.
func TestTextNotUTF8(t *testing.T) {
	c := load(t, "4.3")
	ct, _ := c.Reg.Lookup("CreateTopics")
	for _, tc := range []struct {
		in   string
		want string // "" for a body that reads
		name []byte // the first topic's name, when it reads
	}{
		{"{\"Topics\":[{\"Name\":\"a\xffb\"}]}", `CreateTopicsRequest.Topics[0].Name: text that is not UTF-8 at line 1, column 22: byte 0xff`, nil},
		{"{\"Topics\":[{\"Name\":\"ok\"},\n{\"Name\":\"\xc3\"}]}", `CreateTopicsRequest.Topics[1].Name: text that is not UTF-8 at line 2, column 10: byte 0xc3`, nil},
		{`{"Topics":[{"Name":"x\ud800"}]}`, `CreateTopicsRequest.Topics[0].Name: text that is not UTF-8 at line 1, column 22: \ud800 is half a surrogate pair`, nil},
		{`{"Topics":[{"Name":"\udc00\ud800"}]}`, `at line 1, column 21: \udc00 is half a surrogate pair`, nil},
		{`{"Topics":[{"Name":"\ud800\u0041"}]}`, `\ud800 is half a surrogate pair`, nil},
		{`{"Topics":[{"Name":"\ud83d\ude00\ufffd` + "\uFFFD" + `\\ud800"}]}`, "", []byte("\U0001F600\uFFFD\uFFFD\\ud800")},
	} {
		val, err := Unmarshal(ct.Request, 7, []byte(tc.in))
		if tc.want == "" {
			if err != nil {
				t.Errorf("Unmarshal(%q): %v", tc.in, err)
			} else if got := val.Kids()[0].Kids()[0].Kids()[0].Bytes(); !bytes.Equal(got, tc.name) {
				t.Errorf("Unmarshal(%q): name %q, want %q", tc.in, got, tc.name)
			}
			continue
		}
		if !errors.Is(err, ErrNotUTF8) || err.Error() != tc.want && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Unmarshal(%q) = %v; want ErrNotUTF8 with %q", tc.in, err, tc.want)
		}
	}
}

// TestManyKeys: an object of a million keys, and many unknown tags, are
// read in time proportional to their size. Their order was found by an
// insertion sort, quadratic: this test did not finish within go test's
// default timeout (a million keys is 10^12 steps that way). The error
// names the first key in key order, as with few keys.
func TestManyKeys(t *testing.T) {
	c := load(t, "4.3")
	ct, _ := c.Reg.Lookup("CreateTopics")
	const n = 1_000_000
	var b strings.Builder
	b.WriteString("{")
	for i := n; i > 0; i-- {
		fmt.Fprintf(&b, `"k%07d":1,`, i)
	}
	b.WriteString(`"timeoutMs":5}`)
	_, err := Unmarshal(ct.Request, 7, []byte(b.String()))
	if !errors.Is(err, ErrUnknownField) || !strings.HasPrefix(err.Error(), "CreateTopicsRequest.k0000001: ") {
		t.Errorf("a million keys: %v", err)
	}
	b.Reset()
	const tags = 200_000
	b.WriteString(`{"_unknown_tags":[`)
	for i := tags; i > 0; i-- {
		fmt.Fprintf(&b, `{"tag":%d,"data":""},`, i)
	}
	b.WriteString(`{"tag":0,"data":"01"}]}`)
	val, err := Unmarshal(ct.Request, 7, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if u := val.Unknown(); len(u) != tags+1 || u[0].Tag != 0 || u[tags].Tag != tags || !slices.IsSortedFunc(u, func(a, b codec.RawTag) int { return cmp.Compare(a.Tag, b.Tag) }) {
		t.Errorf("a million unknown tags: %d, not in order", len(u))
	}
}

// TestUnknownTagNumber: an unknown tag's number is read as any integer is
// (1e1, 10.0), and its range is said when it is beyond it.
func TestUnknownTagNumber(t *testing.T) {
	c := load(t, "4.3")
	ct, _ := c.Reg.Lookup("CreateTopics")
	for _, in := range []string{"10", "1e1", "10.0", "100e-1"} {
		val, err := Unmarshal(ct.Request, 7, []byte(`{"_unknown_tags":[{"tag":`+in+`,"data":"01"}]}`))
		if err != nil || len(val.Unknown()) != 1 || val.Unknown()[0].Tag != 10 {
			t.Errorf("tag %s: %+v, %v", in, val.Unknown(), err)
		}
	}
	for in, want := range map[string]string{
		"-1":         "_unknown_tags[0].tag: out of range: -1 is not a tag (0..2147483647)",
		"2147483648": "_unknown_tags[0].tag: out of range: 2147483648 is not a tag (0..2147483647)",
		"1.5":        "_unknown_tags[0].tag: out of range: 1.5 is not a tag (it has a fraction)",
	} {
		_, err := Unmarshal(ct.Request, 7, []byte(`{"_unknown_tags":[{"tag":`+in+`,"data":"01"}]}`))
		if !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), want) {
			t.Errorf("tag %s: %v, want %q", in, err, want)
		}
	}
}

// TestNaNBits: a float64 NaN keeps its bits through JSON. Java's Double.NaN
// (0x7ff8000000000000, what Kafka writes) is "NaN", and "NaN" is read as
// it; a NaN of other bits (Go's math.NaN(), as kmsg writes it; a negative
// or signalling one) is {"hex": ...}, its 8 bytes, and comes back as they
// were. Each frame is kmsg's AlterClientQuotas request with the value's
// bits put in.
func TestNaNBits(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("AlterClientQuotas")
	for _, tc := range []struct {
		bits uint64
		js   string
	}{
		{0x7ff8000000000000, `"NaN"`},
		{math.Float64bits(math.NaN()), `{"hex":"7ff8000000000001"}`},
		{0xfff8000000000000, `{"hex":"fff8000000000000"}`},
		{0x7ff0000000000001, `{"hex":"7ff0000000000001"}`},
		{math.Float64bits(math.Inf(-1)), `"-Infinity"`},
		{math.Float64bits(math.Copysign(0, -1)), `-0`},
	} {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		req.Version = 1
		e := kmsg.NewAlterClientQuotasRequestEntry()
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = "k", math.Float64frombits(tc.bits)
		e.Ops = append(e.Ops, op)
		req.Entries = append(req.Entries, e)
		want := req.AppendTo(nil)
		if !bytes.Contains(want, binary.BigEndian.AppendUint64(nil, tc.bits)) {
			t.Fatalf("%016x: kmsg wrote %x", tc.bits, want)
		}
		dec, _, err := c.DecodeBody(api.Request, 1, want, codec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		js, err := Marshal(api.Request, 1, &dec)
		if err != nil || !bytes.Contains(js, []byte(`"Value":`+tc.js)) {
			t.Errorf("%016x: JSON %s, %v; want Value %s", tc.bits, js, err, tc.js)
		}
		back, err := Unmarshal(api.Request, 1, js)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.EncodeBody(nil, api.Request, 1, &back)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%016x: through JSON %x, %v; kmsg %x", tc.bits, got, err, want)
		}
	}
}

// TestNullElement: an array element is never null, even in an array that
// may itself be null; the error says so rather than citing the array's
// nullable versions, which include the version.
func TestNullElement(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("Metadata")
	if _, err := Unmarshal(api.Request, 12, []byte(`{"Topics":null}`)); err != nil {
		t.Fatalf("null Topics: %v", err)
	}
	_, err := Unmarshal(api.Request, 12, []byte(`{"Topics":[null]}`))
	if want := "MetadataRequest.Topics[0]: null where this version does not allow null: an array element is never null"; !errors.Is(err, ErrNull) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
