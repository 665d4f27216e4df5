// Package testframes builds Kafka frames with franz-go's kmsg, an encoder
// independent of manifester's, for tests: the bytes a real client or
// broker would send. Only tests import it.
package testframes

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
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
