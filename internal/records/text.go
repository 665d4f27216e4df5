package records

import (
	"strings"
	"time"
)

// AttributesText describes RecordBatch v2 attribute bits.
func AttributesText(a int16) string {
	if a&^AttrCompression == 0 {
		return CompressionName(int(a & AttrCompression))
	}
	parts := []string{CompressionName(int(a & AttrCompression))}
	if a&AttrLogAppendTime != 0 {
		parts = append(parts, "LogAppendTime")
	}
	if a&AttrTransactional != 0 {
		parts = append(parts, "transactional")
	}
	if a&AttrControl != 0 {
		parts = append(parts, "control")
	}
	if a&64 != 0 {
		parts = append(parts, "delete horizon")
	}
	return strings.Join(parts, ", ")
}

// TimestampNote renders a millisecond timestamp as a UTC date when it is
// plausibly one (2000..2100), else "".
func TimestampNote(ms int64) string {
	const lo, hi = 946684800000, 4102444800000
	if ms < lo || ms > hi {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
