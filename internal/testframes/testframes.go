// Package testframes builds Kafka frames with franz-go's kmsg, an encoder
// independent of manifester's, for tests: the bytes a real client or
// broker would send; and it loads the registries of Kafka's specs under
// ../shared once per test binary. Only tests import it.
package testframes

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

// Request frames a kmsg request with its header (client id clientID,
// correlation id corr), as a franz-go client sends it.
func Request(clientID string, r kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, r, corr)
}

// apiVersionsKey is ApiVersions' key: its responses keep header v0 (no
// tagged fields) at every version, so that any client can read them.
const apiVersionsKey = 18

// Response frames a kmsg response: size, correlation id, the flexible
// header's empty tagged fields (not for ApiVersions), the body.
func Response(r kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 64), uint32(corr))
	if r.IsFlexible() && r.Key() != apiVersionsKey {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// registries holds the registries loaded, by release.
var registries sync.Map // release -> *loaded

type loaded struct {
	once sync.Once
	reg  *schema.Registry
	err  error
}

// Registry is the registry of Kafka's specs of release ("4.3", "trunk")
// under ../shared, loaded once per test binary; the test is skipped (or,
// with CI=true, fails) when ../shared is not there.
func Registry(t testing.TB, release string) *schema.Registry {
	t.Helper()
	testshared.Dir(t)
	v, _ := registries.LoadOrStore(release, &loaded{})
	l := v.(*loaded)
	l.once.Do(func() { l.reg, l.err = schema.Load(testshared.SpecPath(release)) })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.reg
}

// Codec is a codec over Registry(t, release).
func Codec(t testing.TB, release string) *codec.Codec {
	t.Helper()
	return codec.New(Registry(t, release))
}

// CreateTopics is a CreateTopics request at version v, validate only, for
// one topic "orders" of three partitions at replication factor 1: a small
// request with a string, integers, a bool and an array of structs.
func CreateTopics(v int16) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = v
	req.ValidateOnly = true
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = "orders"
	t.NumPartitions = 3
	t.ReplicationFactor = 1
	req.Topics = append(req.Topics, t)
	return req
}
