package wire

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel causes of decode errors. A [DecodeError] wraps one of them, or
// one of the sentinels of the layers above: schema.ErrUnknownAPI (an API
// key the spec does not define), the record-batch causes of package
// records (records.ErrCRC, ErrBatchLength, ErrRecordLength, ErrMagic,
// ErrCompression).
var (
	ErrNegativeLength = errors.New("negative length other than -1 (null)")
	ErrNull           = errors.New("null where this version does not allow null")
	ErrCountTooLarge  = errors.New("count larger than the remaining bytes could hold")
	ErrTagOrder       = errors.New("tagged fields out of order or duplicated")
	ErrTagVersion     = errors.New("tag not valid for this version")
	ErrTagSize        = errors.New("tagged field size disagrees with its value")
	ErrTrailing       = errors.New("trailing bytes after the message")
	ErrFrameSize      = errors.New("size prefix disagrees with the data")
	ErrVersion        = errors.New("version outside the spec's range")
)

// DecodeError says where decoding failed: the byte offset in the frame, the
// field path and the cause. Its message is built from those fields; use
// errors.Is on it to test the cause.
type DecodeError struct {
	Offset int
	Path   string
	Err    error
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "offset 0x%04x (%d)", e.Offset, e.Offset)
	if e.Path != "" {
		b.WriteString(", ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *DecodeError) Unwrap() error { return e.Err }
