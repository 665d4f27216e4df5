package codec

import (
	"strconv"

	"github.com/manifester/manifester/internal/span"
)

// The descriptors of the nodes that are not from a spec field, made once.
// A node's text that depends on its bytes (an array's "3 elements
// follow", an unknown tag's "tag 7") is in the node's extras.
var (
	descRequestRoot  = span.NewDesc("Request", "message", "")
	descResponseRoot = span.NewDesc("Response", "message", "")
	descMessageRoot  = span.NewDesc("", "message", "") // a message at a version it does not have: name and type in the extras
	descFrame        = span.NewDesc("Frame", "", "length-delimited framing")
	descSize         = span.NewDesc("size", "int32", "number of bytes that follow, patched after encoding")
	descHeader       = [2][16]*span.Desc{headerDescs("RequestHeader", "common request header"), headerDescs("ResponseHeader", "common response header")}
	descHeaderAny    = [2]*span.Desc{span.NewDesc("RequestHeader", "", "common request header"), span.NewDesc("ResponseHeader", "", "common response header")}
	descAPIKey       = span.Register(&span.Desc{Name: "request_api_key", Type: "int16", About: "numeric id of the API being invoked", Note: span.NoteAPIKey})
	descAPIVersion   = span.NewDesc("request_api_version", "int16", "version of the API being invoked")
	descCorrelation  = [2]*span.Desc{
		span.NewDesc("correlation_id", "int32", "echoed back by the broker in the response"),
		span.NewDesc("correlation_id", "int32", "matches the correlation_id of the request"),
	}
	descClientID     = span.NewDesc("client_id", "nullable_string", "always a non-flexible int16-prefixed string")
	descHeaderTagged = span.NewDesc("tagged_fields", "uvarint", "number of tagged fields in the header")
	descStructTagged = span.NewDesc("tagged_fields", "uvarint", "number of tagged fields in this struct")
	descTagCount     = span.NewDesc("count", "uvarint", "tagged fields that follow")
	descTag          = span.NewDesc("tag", "", "")
	descTagNumber    = span.NewDesc("tag", "uvarint", "tag number")
	descTagSize      = span.NewDesc("size", "uvarint", "bytes of the value")
	descUnknownTag   = span.NewDesc("unknown_tag", "", "a tag this spec does not define, kept as raw bytes")
	descTagData      = span.NewDesc("data", "bytes", "")
	// descLength are array length prefixes by encoding (their About is in
	// the extras); descRecordsLength records length prefixes.
	descLength = [...]*span.Desc{
		span.EncInt16:   span.NewDesc("length", "int16", ""),
		span.EncInt32:   span.NewDesc("length", "int32", ""),
		span.EncCompact: span.NewDesc("length", "uvarint", ""),
	}
	descRecordsLength = [...]*span.Desc{
		span.EncInt16:   span.NewDesc("length", "int16", "bytes of record data that follow"),
		span.EncInt32:   span.NewDesc("length", "int32", "bytes of record data that follow"),
		span.EncCompact: span.NewDesc("length", "uvarint", "bytes of record data that follow, plus one"),
	}
	descPresence       = span.NewDesc("presence", "int8", "nullable struct marker: -1 null, 1 present")
	descTaggedPresence = span.NewDesc("presence", "uvarint", "tagged nullable struct marker: 0 null, 1 present")
	descUndecoded      = span.NewDesc("undecoded", "bytes", "bytes after the decoding error")

	// Internal records.
	descBlobLength      = [2]*span.Desc{span.NewDesc("length", "varint", "bytes of the key that follow"), span.NewDesc("length", "varint", "bytes of the value that follow")}
	descControlKeyVer   = span.NewDesc("version", "int16", "version of the control record key")
	descControlValueVer = span.NewDesc("version", "int16", "version of the control record value")
	descValueVersion    = span.NewDesc("version", "int16", "version of the value schema")
	descRecordType      = span.NewDesc("type", "int16", "record type: the apiKey of the key and value schemas")
	descMetadataFields  = [3]*span.Desc{
		span.NewDesc("frame_version", "uvarint", "record frame version, always 1"),
		span.NewDesc("api_key", "uvarint", "metadata record type"),
		span.NewDesc("version", "uvarint", "version of the record's schema"),
	}
	descRecordRest = span.NewDesc("undecoded", "bytes", "bytes not read as the record's schema")
	descPartKey    = span.NewDesc("key", "bytes", "")
	descPartValue  = span.NewDesc("value", "bytes", "")
)

// descCounts are the array length prefixes of small counts by encoding,
// with their "3 elements follow" descriptions; descCountNull those of
// null arrays; descCountSample those of the one element of a sample.
var (
	descCounts      [span.EncCompact + 1][len(countAbouts)]*span.Desc
	descCountNull   [span.EncCompact + 1]*span.Desc
	descCountSample [span.EncCompact + 1]*span.Desc
)

func init() {
	for _, e := range []span.Enc{span.EncInt16, span.EncInt32, span.EncCompact} {
		typ := lengthType(e)
		for n := range descCounts[e] {
			about := countAbouts[n]
			if n == 1 {
				about = "1 element follows"
			}
			descCounts[e][n] = span.NewDesc("length", typ, about)
		}
		descCountNull[e] = span.NewDesc("length", typ, "null")
		descCountSample[e] = span.NewDesc("length", typ, "one sample element follows")
	}
}

// countDesc returns the descriptor of an array length prefix of count
// elements, nil for counts without one (their text is in the extras).
func countDesc(e span.Enc, count int64, sample bool) *span.Desc {
	switch {
	case e > span.EncCompact:
		return nil
	case count < 0:
		return descCountNull[e]
	case count == 1 && sample:
		return descCountSample[e]
	case count < int64(len(countAbouts)):
		return descCounts[e][count]
	}
	return nil
}

func headerDescs(name, about string) (out [16]*span.Desc) {
	for v := range out {
		out[v] = span.NewDesc(name, "v"+strconv.Itoa(v), about)
	}
	return out
}
