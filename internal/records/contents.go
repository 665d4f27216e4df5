package records

import "github.com/manifester/manifester/internal/span"

// The attribute bits of a RecordBatch v2 (and, compression and
// timestamp type, of a legacy message v1).
const (
	AttrCompression   = 0x07 // the codec (CompressionName)
	AttrLogAppendTime = 0x08 // timestamps are the broker's: maxTimestamp
	AttrTransactional = 0x10
	AttrControl       = 0x20
)

// Contents interprets the key and value of one record, for example as the
// versioned messages of an internal topic. key and value are the record's
// key and value rows of t (leaves until then): their value bytes hold the
// data (none when Null), and the data starts at Off+Len-VLen, after the
// varint length. The function may give them children that tile the same
// bytes, and flags problems on them instead of failing: a key or value
// that does not read as its schema still leaves a well-formed batch.
// control is set for the records of a control batch.
type Contents func(t *span.Tree, key, value span.ID, control bool)
