package records

import "errors"

// Sentinel causes of record-batch decode errors. A *wire.DecodeError
// wraps one of them (test with errors.Is); the texts are those the
// decoders have always printed.
var (
	// ErrCRC: a batch's or a legacy message's CRC disagrees with its bytes.
	ErrCRC = errors.New("CRC mismatch")
	// ErrBatchLength: a batch's (or a legacy message's) length disagrees
	// with the data.
	ErrBatchLength = errors.New("batch length disagrees with the data")
	// ErrRecordLength: a record's length disagrees with the data.
	ErrRecordLength = errors.New("record length disagrees with the data")
	// ErrHeaderCount: a record's header count is negative.
	ErrHeaderCount = errors.New("negative header count")
	// ErrMagic: a batch's magic byte is not 0, 1 or 2.
	ErrMagic = errors.New("unknown record magic")
	// ErrCompression: a batch's records could not be inflated (the
	// decoder's flag names the cause). Package compress re-exports it.
	ErrCompression = errors.New("cannot decompress records")
)
