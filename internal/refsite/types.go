package refsite

import (
	"encoding/hex"

	"github.com/manifester/manifester/internal/wire"
)

// PrimitiveType is one row of the primitive-types page: a wire type, what
// it holds, how it is written, and its smallest encoding.
type PrimitiveType struct {
	Name     string // the protocol guide's name, e.g. COMPACT_STRING
	Spec     string // how the spec files write it, e.g. "string (flexible version)"
	Holds    string
	Encoding string
	Smallest string // what the smallest encoding stands for
	Bytes    []byte // the smallest encoding
	Class    string // grid colour class of the bytes
}

// Hex is the smallest encoding as spaced hex pairs.
func (t PrimitiveType) Hex() []string {
	out := make([]string, len(t.Bytes))
	for i, b := range t.Bytes {
		out[i] = hex.EncodeToString([]byte{b})
	}
	return out
}

// PrimitiveTypes lists the wire types of the Kafka protocol. The smallest
// encodings are computed with package wire, the same primitives the codec
// writes with.
func PrimitiveTypes() []PrimitiveType {
	const body, tag = "c-req", "c-tag"
	return []PrimitiveType{
		{"BOOLEAN", "bool", "true or false", "one byte, 0 for false and 1 for true", "false", wire.AppendBool(nil, false), body},
		{"INT8", "int8", "a signed 8-bit integer", "one byte, two's complement", "0", wire.AppendInt8(nil, 0), body},
		{"INT16", "int16", "a signed 16-bit integer", "two bytes, big-endian, two's complement", "0", wire.AppendInt16(nil, 0), body},
		{"UINT16", "uint16", "an unsigned 16-bit integer", "two bytes, big-endian", "0", wire.AppendUint16(nil, 0), body},
		{"INT32", "int32", "a signed 32-bit integer", "four bytes, big-endian, two's complement", "0", wire.AppendInt32(nil, 0), body},
		{"UINT32", "uint32", "an unsigned 32-bit integer", "four bytes, big-endian", "0", wire.AppendUint32(nil, 0), body},
		{"INT64", "int64", "a signed 64-bit integer", "eight bytes, big-endian, two's complement", "0", wire.AppendInt64(nil, 0), body},
		{"FLOAT64", "float64", "an IEEE 754 double", "eight bytes, big-endian binary64", "0.0", wire.AppendFloat64(nil, 0), body},
		{"UUID", "uuid", "a 128-bit id (topic ids)", "sixteen bytes, most significant first; all zeros is the null id", "the zero uuid", make([]byte, 16), body},
		{"UNSIGNED_VARINT", "(lengths, tag counts)", "an unsigned integer up to 2^32-1", "7 bits per byte, least significant group first, high bit set on every byte but the last", "0", wire.AppendUvarint(nil, 0), body},
		{"VARINT", "(record fields)", "a signed 32-bit integer", "zig-zag (0, -1, 1, -2 become 0, 1, 2, 3), then as UNSIGNED_VARINT", "0", wire.AppendVarint(nil, 0), body},
		{"VARLONG", "(record fields)", "a signed 64-bit integer", "zig-zag, then 7 bits per byte as for UNSIGNED_VARINT, up to 10 bytes", "0", wire.AppendVarlong(nil, 0), body},
		{"STRING", "string", "UTF-8 text", "INT16 length N, then N bytes", `""`, wire.AppendInt16(nil, 0), body},
		{"COMPACT_STRING", "string (flexible versions)", "UTF-8 text", "UNSIGNED_VARINT N+1, then N bytes", `""`, wire.AppendUvarint(nil, 1), body},
		{"NULLABLE_STRING", "string with nullableVersions", "UTF-8 text or null", "as STRING; length -1 is null", "null", wire.AppendInt16(nil, -1), body},
		{"COMPACT_NULLABLE_STRING", "string with nullableVersions (flexible versions)", "UTF-8 text or null", "as COMPACT_STRING; 0 is null", "null", wire.AppendUvarint(nil, 0), body},
		{"BYTES", "bytes", "raw bytes", "INT32 length N, then N bytes", "empty", wire.AppendInt32(nil, 0), body},
		{"COMPACT_BYTES", "bytes (flexible versions)", "raw bytes", "UNSIGNED_VARINT N+1, then N bytes", "empty", wire.AppendUvarint(nil, 1), body},
		{"NULLABLE_BYTES", "bytes with nullableVersions", "raw bytes or null", "as BYTES; length -1 is null", "null", wire.AppendInt32(nil, -1), body},
		{"COMPACT_NULLABLE_BYTES", "bytes with nullableVersions (flexible versions)", "raw bytes or null", "as COMPACT_BYTES; 0 is null", "null", wire.AppendUvarint(nil, 0), body},
		{"RECORDS", "records", "a RecordBatch sequence (or a legacy MessageSet)", "as NULLABLE_BYTES, the bytes being record batches", "null", wire.AppendInt32(nil, -1), body},
		{"COMPACT_RECORDS", "records (flexible versions)", "a RecordBatch sequence", "as COMPACT_NULLABLE_BYTES", "null", wire.AppendUvarint(nil, 0), body},
		{"ARRAY", "[]T", "a sequence of T", "INT32 count N (-1 is null where nullable), then N elements", "empty", wire.AppendInt32(nil, 0), body},
		{"COMPACT_ARRAY", "[]T (flexible versions)", "a sequence of T", "UNSIGNED_VARINT N+1 (0 is null where nullable), then N elements", "empty", wire.AppendUvarint(nil, 1), body},
		{"TAGGED_FIELDS", "(every struct of a flexible version)", "optional fields by tag", "UNSIGNED_VARINT count, then per field: UNSIGNED_VARINT tag, UNSIGNED_VARINT size, the value; tags ascending", "no tagged fields", wire.AppendUvarint(nil, 0), tag},
	}
}

type typesPage struct {
	Types []PrimitiveType
}

func typesView() *typesPage { return &typesPage{Types: PrimitiveTypes()} }
