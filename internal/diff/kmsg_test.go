package diff

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The size figures of a diff are frame sizes of the smallest instances.
// Check the ones the tests rely on against franz-go's kmsg, an independent
// encoder: kmsg writes the body only, so add the 4-byte length, and the
// header: request header v2 with an empty client id is 2+2+4+2+1 = 11
// bytes, response header v0 is the 4-byte correlation id.
func TestSizesAgainstKmsg(t *testing.T) {
	const reqHeader2, respHeader0 = 4 + 11, 4 + 4

	fetch := func(v int16) int {
		r := kmsg.NewPtrFetchRequest()
		r.Version = v
		topic := kmsg.NewFetchRequestTopic()
		topic.Partitions = []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}
		r.Topics = []kmsg.FetchRequestTopic{topic}
		forgotten := kmsg.NewFetchRequestForgottenTopic()
		forgotten.Partitions = []int32{0}
		r.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{forgotten}
		return reqHeader2 + len(r.AppendTo(nil))
	}
	apiVersions := func(v int16) int {
		r := kmsg.NewPtrApiVersionsResponse()
		r.Version = v
		r.ApiKeys = []kmsg.ApiVersionsResponseApiKey{kmsg.NewApiVersionsResponseApiKey()}
		return respHeader0 + len(r.AppendTo(nil))
	}
	fd := versionDiff(t, "4.3", "Fetch", 12, 13)
	if want := (IntPair{fetch(12), fetch(13)}); fd.Request.Size != want {
		t.Errorf("Fetch request sizes %+v, kmsg gives %+v", fd.Request.Size, want)
	}
	ad := versionDiff(t, "4.3", "ApiVersions", 2, 3)
	if want := (IntPair{apiVersions(2), apiVersions(3)}); ad.Response.Size != want {
		t.Errorf("ApiVersions response sizes %+v, kmsg gives %+v", ad.Response.Size, want)
	}
}

// kmsgBody is what kmsg, an independent encoder, writes for a request or
// response at version v holding its defaults (arrays empty, nullable
// fields null), or nil when kmsg lacks the message or the version.
func kmsgBody(key int16, response bool, v int16) []byte {
	var m interface {
		MaxVersion() int16
		SetVersion(int16)
		AppendTo([]byte) []byte
	}
	if response {
		if r := kmsg.ResponseForKey(key); r != nil {
			m = r
		}
	} else if r := kmsg.RequestForKey(key); r != nil {
		m = r
	}
	if m == nil || v > m.MaxVersion() {
		return nil
	}
	m.SetVersion(v)
	return m.AppendTo(nil)
}

// emptySize is the size of a field holding its empty value (zero, empty,
// or null, which takes as many bytes), or -1 for a struct.
func emptySize(typ string, flexible bool) int {
	if strings.HasPrefix(typ, "[]") {
		if flexible {
			return 1
		}
		return 4
	}
	switch typ {
	case "bool", "int8":
		return 1
	case "int16", "uint16":
		return 2
	case "int32", "uint32":
		return 4
	case "int64", "float64":
		return 8
	case "uuid":
		return 16
	case "string":
		if flexible {
			return 1
		}
		return 2
	case "bytes", "records":
		if flexible {
			return 1
		}
		return 4
	}
	return -1
}

// TestVersionDiffsAgainstKmsg: for every adjacent pair of versions kmsg
// knows, in every release, the bodies kmsg writes with their defaults
// agree with the diff: the same size when the diff reports no field
// change, and bigger by the added fields' empty encodings when it only
// adds untagged fields of the body.
func TestVersionDiffsAgainstKmsg(t *testing.T) {
	checked := 0
	for _, rel := range []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"} {
		c := load(t, rel)
		for _, api := range c.Reg.APIs {
			valid := api.Request.Valid
			for a := valid.Lo; !valid.Empty() && a < valid.Hi; a++ {
				b := a + 1
				vd, err := Versions(c, api, a, b)
				if err != nil {
					t.Fatal(err)
				}
				for i, md := range []MessageDiff{vd.Request, vd.Response} {
					ka, kb := kmsgBody(api.Key, i == 1, a), kmsgBody(api.Key, i == 1, b)
					if ka == nil || kb == nil || md.Flexible.Changed() {
						continue
					}
					want, ok := 0, true
					for _, sd := range md.Structs {
						if sd.Path != "" || len(sd.Removed) > 0 || len(sd.Changed) > 0 {
							ok = false
						}
						for _, f := range sd.Added {
							n := emptySize(f.Type, md.Flexible.To)
							if f.Tag != nil {
								continue // at its default: not written
							}
							if n < 0 || (f.Default != "" && (f.Type == "string" || f.Type == "bytes")) {
								ok = false
							}
							want += n
						}
					}
					if !ok {
						continue
					}
					checked++
					if got := len(kb) - len(ka); got != want {
						t.Errorf("%s %s v%d -> v%d: kmsg's body grows %d bytes, the diff's added fields take %d (%+v)",
							rel, md.Message, a, b, got, want, md.Structs)
					}
				}
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d pairs checked", checked)
	}
	t.Logf("%d pairs checked against kmsg", checked)
}
