package records

import "github.com/manifester/manifester/internal/span"

// The descriptors of the nodes a records payload is shown as, made once.
// The text of a node that depends on its bytes (a compressed area's
// description, a batch's record count) is in the node's extras.
var (
	descBatch       = span.NewDesc("RecordBatch", "RecordBatch v2", "")
	descBaseOffset  = span.NewDesc("baseOffset", "int64", "offset of the first record")
	descBatchLength = span.NewDesc("batchLength", "int32", "bytes after this field")
	descPLE         = span.NewDesc("partitionLeaderEpoch", "int32", "leader epoch, -1 if none; not covered by the CRC")
	descBatchMagic  = span.NewDesc("magic", "int8", "record format version")
	descBatchCRC    = span.NewDesc("crc", "uint32", "CRC-32C of attributes through the last record")
	descBatchAttrs  = span.NewDesc("attributes", "int16", "compression, timestamp type, transactional, control")
	descBatchFields = [...]*span.Desc{
		span.NewDesc("lastOffsetDelta", "int32", "offset delta of the last record"),
		timestampDesc("baseTimestamp", "timestamp of the first record"),
		timestampDesc("maxTimestamp", "largest timestamp in the batch"),
		span.NewDesc("producerId", "int64", "idempotent producer id, -1 if none"),
		span.NewDesc("producerEpoch", "int16", "producer epoch, -1 if none"),
		span.NewDesc("baseSequence", "int32", "sequence of the first record, -1 if none"),
		span.NewDesc("recordsCount", "int32", "number of records"),
	}
	descCompressed      = span.NewDesc("records", "bytes", "")
	descDecompressed    = span.NewDesc("decompressed", "bytes", "records after decompression; offsets are within these bytes")
	descDecompressedSet = span.NewDesc("decompressed", "bytes", "inner MessageSet after decompression; offsets are within these bytes")
	descNotDecoded      = span.NewDesc("not decoded", "bytes", "inflated bytes the budget left undecoded")
	descPartial         = span.NewDesc("partial entry", "bytes", "")

	descRecord      = span.NewDesc("Record", "Record v2", "")
	descRecLength   = span.NewDesc("length", "varint", "bytes of the rest of this record")
	descRecAttrs    = span.NewDesc("attributes", "int8", "unused, 0")
	descTSDelta     = span.NewDesc("timestampDelta", "varlong", "relative to baseTimestamp")
	descOffDelta    = span.NewDesc("offsetDelta", "varint", "relative to baseOffset")
	descKey         = span.NewDesc("key", "bytes", "")
	descValue       = span.NewDesc("value", "bytes", "")
	descHeaderCount = span.NewDesc("headerCount", "varint", "number of headers")
	descHeader      = span.NewDesc("Header", "RecordHeader", "")
	descHeaderKey   = span.NewDesc("headerKey", "bytes", "")
	descHeaderValue = span.NewDesc("headerValue", "bytes", "")

	descMessage     = [2]*span.Desc{span.NewDesc("Message", "MessageSet v0", ""), span.NewDesc("Message", "MessageSet v1", "")}
	descMsgOffset   = span.NewDesc("offset", "int64", "offset (relative inside a compressed wrapper)")
	descMsgSize     = span.NewDesc("messageSize", "int32", "bytes of the message that follows")
	descMsgCRC      = span.NewDesc("crc", "uint32", "CRC-32 (IEEE) of magic through value")
	descMsgMagic    = span.NewDesc("magic", "int8", "message format version")
	descMsgAttrs    = span.NewDesc("attributes", "int8", "compression codec (bits 0-2)")
	descMsgTS       = timestampDesc("timestamp", "message timestamp")
	descMsgKeyValue = [2]*span.Desc{descKey, descValue}
)

func timestampDesc(name, about string) *span.Desc {
	return span.Register(&span.Desc{Name: name, Type: "int64", About: about, Note: span.NoteTimestamp})
}
