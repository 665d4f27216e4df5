// Package records decodes and encodes the payload of Kafka "records"
// fields: RecordBatch v2 with Record v2 (and their headers), and the legacy
// MessageSet v0/v1 that old Fetch data can still carry.
//
// Decoding annotates the bytes as rows of a [span.Tree] and checks the CRC
// (CRC-32C for v2, CRC-32/IEEE for v0/v1) and every length. A trailing
// partial entry, which Fetch responses may legitimately end with, is shown
// as such and is not an error.
package records

import (
	"encoding/binary"
	"hash/crc32"
)

// BatchHeaderSize is the size of a RecordBatch v2 header, up to and
// including recordsCount.
const BatchHeaderSize = 61

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) of b, as RecordBatch v2 uses.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Batch is the header of a RecordBatch v2 plus its records area (still
// compressed when Attributes says so).
type Batch struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
	Records              []byte // encoded records area
}

// AppendBatch appends b as a RecordBatch v2, computing batchLength and the
// CRC-32C. NumRecords is written as given.
func AppendBatch(dst []byte, b *Batch) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseOffset))
	dst = binary.BigEndian.AppendUint32(dst, 0) // batchLength, patched below
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, 2) // magic
	crcAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0) // crc, patched below
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.Attributes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.LastOffsetDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.MaxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.BaseSequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.NumRecords))
	dst = append(dst, b.Records...)
	binary.BigEndian.PutUint32(dst[start+8:], uint32(len(dst)-start-12))
	binary.BigEndian.PutUint32(dst[crcAt:], CRC32C(dst[crcAt+4:]))
	return dst
}

// EmptyBatch returns the smallest legal RecordBatch v2: 61 bytes, every
// field zero, no records, batchLength 49 and a correct CRC.
func EmptyBatch() []byte { return AppendBatch(make([]byte, 0, BatchHeaderSize), &Batch{}) }
