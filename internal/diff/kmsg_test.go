package diff

import (
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
