package jsonvalue

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// shape is a large input of one form, for the memory test and the
// benchmark.
type shape struct {
	name string
	msg  *schema.Message
	v    int16
	in   []byte
	ok   bool // the input reads without error
}

// repeatList is "[" + n copies of item joined by "," + "]".
func repeatList(item string, n int) string {
	var b strings.Builder
	b.Grow(n*(len(item)+1) + 2)
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteByte(']')
	return b.String()
}

// shapes returns inputs of about size bytes each: a long int array, many
// small structs, many strings, deep nesting (skipped, inside a key that
// names no field), one records batch of many records, many records
// objects and an object of many keys.
func shapes(t testing.TB, size int) []shape {
	c := load(t, "4.3")
	lookup := func(name string) *schema.API {
		api, err := c.Reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return api
	}
	ct, dg, pr := lookup("CreateTopics").Request, lookup("DescribeGroups").Request, lookup("Produce").Request
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	produce := func(records string) []byte {
		return []byte(`{"Acks":1,"TimeoutMs":5,"TopicData":[{"Name":"t","PartitionData":[{"Index":0,"Records":` + records + `}]}]}`)
	}
	return []shape{
		{"ints", ct, 7, []byte(`{"Topics":[{"Name":"t","Assignments":[{"PartitionIndex":0,"BrokerIds":` + repeatList("7", size/2) + `}]}]}`), true},
		{"structs", ct, 7, []byte(`{"Topics":[{"Name":"t","Configs":` + repeatList(`{"Name":"n","Value":null}`, size/26) + `}]}`), true},
		{"strings", dg, 5, []byte(`{"Groups":` + repeatList(`"group"`, size/8) + `}`), true},
		{"deep", ct, 7, []byte(`{"Topics":[],"Unknown":` + repeatList(deep, size/len(deep)) + `}`), false},
		{"records", pr, 9, produce(`{"records":` + repeatList(`{"key":"k","value":"v","headers":[{"key":"h","value":"x"}]}`, size/56) + `}`), true},
		{"batches", pr, 9, produce(repeatList(`{}`, size/3)), true},
		// Every key of an object is kept, to find one given twice: 8
		// bytes each, and 8 to 16 in a hash table, for 13 bytes of JSON.
		{"keys", ct, 7, manyKeys(size / 13), false},
	}
}

// manyKeys is an object of n keys that name no field (each wrongly, and
// each needed to find a key given twice).
func manyKeys(n int) []byte {
	var b strings.Builder
	b.WriteString("{")
	for i := n; i > 0; i-- {
		fmt.Fprintf(&b, `"k%07d":1,`, i)
	}
	b.WriteString(`"timeoutMs":5}`)
	return []byte(b.String())
}

// valuesSize is what val holds: 16 bytes a kid, its bytes and its
// unknown tags.
func valuesSize(val *codec.Value) uint64 {
	n := uint64(len(val.Bytes()))
	for _, t := range val.Unknown() {
		n += 32 + uint64(len(t.Data))
	}
	for i := range val.Kids() {
		n += 16 + valuesSize(&val.Kids()[i])
	}
	return n
}

// allocated is the bytes read allocates beyond the Value it returns
// (nothing when it fails), and that Value's size.
func allocated(read func() (codec.Value, error)) (beyond, values uint64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	val, err := read()
	runtime.ReadMemStats(&after)
	values = valuesSize(&val)
	total := after.TotalAlloc - before.TotalAlloc
	return total - min(total, values), values, err
}

// maxBytesPerInputByte bounds what Unmarshal allocates, beyond the Values
// it returns, for each byte of its input: all it allocates, not only
// what is live at once, so it bounds the peak of live heap too. The
// streaming reader takes under 0.3 (a fixed few hundred KB for the
// deepest nesting, the rest a few KB), the tree took 20 to 226.
const maxBytesPerInputByte = 2.0

// maxBytesPerInputByteKeys is the bound for an object of many short keys,
// which the reader must all remember (it takes 4, the tree took 30).
const maxBytesPerInputByteKeys = 6.0

// TestMemoryPerInputByte: for large inputs of every shape, Unmarshal
// allocates at most maxBytesPerInputByte for each input byte beyond the
// Values themselves. The tree the reader built first took 45 to 95.
func TestMemoryPerInputByte(t *testing.T) {
	for _, s := range shapes(t, 4<<20) {
		beyond, values, err := allocated(func() (codec.Value, error) { return Unmarshal(s.msg, s.v, s.in) })
		if (err == nil) != s.ok {
			t.Fatalf("%s: %v", s.name, err)
		}
		perByte := float64(beyond) / float64(len(s.in))
		t.Logf("%s: %d input bytes, %d bytes of Values, %.2f more bytes allocated per input byte", s.name, len(s.in), values, perByte)
		bound := maxBytesPerInputByte
		if s.name == "keys" {
			bound = maxBytesPerInputByteKeys
		}
		if perByte > bound {
			t.Errorf("%s: %.2f bytes allocated per input byte beyond the Values, want at most %g", s.name, perByte, bound)
		}
	}
}

// BenchmarkUnmarshal reads the sample body of every request and response
// at 4.3 (ordinary inputs, "samples"), and each large shape; allocB/inB
// is the bytes allocated per input byte beyond the Values. The old
// reader's figures are the "old" sub-benchmarks.
func BenchmarkUnmarshal(b *testing.B) {
	c := load(b, "4.3")
	type body struct {
		m  *schema.Message
		js []byte
	}
	var bodies []body
	size := 0
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for _, m := range []*schema.Message{api.Request, api.Response} {
			val := sample.Body(m, m.Valid.Hi)
			js, err := Marshal(m, m.Valid.Hi, &val)
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, body{m, js})
			size += len(js)
		}
	}
	readers := []struct {
		name string
		read func(m *schema.Message, v int16, in []byte) (codec.Value, error)
	}{
		{"new", func(m *schema.Message, v int16, in []byte) (codec.Value, error) { return Unmarshal(m, v, in) }},
		{"old", func(m *schema.Message, v int16, in []byte) (codec.Value, error) {
			return oldUnmarshalAt(m, v, in, 0, len(in))
		}},
	}
	for _, r := range readers {
		b.Run("samples/"+r.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, x := range bodies {
					if _, err := r.read(x.m, x.m.Valid.Hi, x.js); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	for _, s := range shapes(b, 1<<20) {
		for _, r := range readers {
			b.Run(s.name+"/"+r.name, func(b *testing.B) {
				b.SetBytes(int64(len(s.in)))
				b.ReportAllocs()
				beyond, _, _ := allocated(func() (codec.Value, error) { return r.read(s.msg, s.v, s.in) })
				for b.Loop() {
					if _, err := r.read(s.msg, s.v, s.in); (err == nil) != s.ok {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(beyond)/float64(len(s.in)), "allocB/inB")
			})
		}
	}
}

// sameValue reports where a and b differ, "" when they do not: nulls,
// integers, bytes (nil or not), kids and unknown tags.
func sameValue(a, b *codec.Value, path string) string {
	switch {
	case a.IsNull() != b.IsNull():
		return path + ": null differs"
	case a.Int() != b.Int():
		return fmt.Sprintf("%s: %d != %d", path, a.Int(), b.Int())
	case !bytes.Equal(a.Bytes(), b.Bytes()) || (a.Bytes() == nil) != (b.Bytes() == nil):
		return fmt.Sprintf("%s: bytes %x != %x", path, a.Bytes(), b.Bytes())
	case len(a.Kids()) != len(b.Kids()) || (a.Kids() == nil) != (b.Kids() == nil):
		return fmt.Sprintf("%s: %d kids != %d", path, len(a.Kids()), len(b.Kids()))
	case len(a.Unknown()) != len(b.Unknown()):
		return path + ": unknown tags differ"
	}
	for i, t := range a.Unknown() {
		if u := b.Unknown()[i]; t.Tag != u.Tag || !bytes.Equal(t.Data, u.Data) {
			return path + ": unknown tags differ"
		}
	}
	for i := range a.Kids() {
		if d := sameValue(&a.Kids()[i], &b.Kids()[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}
