// Package span is the annotated view of encoded bytes, the one tree every
// front end and renderer reads: a [Tree] is a flat, pointer-free table of
// [Row]s, each naming (through its [Desc]) a field, its type and its
// description, with its value and the [offset, size] of its bytes in the
// frame, and a [Category] for colouring.
//
// Leaf rows tile the frame: every byte belongs to exactly one leaf. Group
// rows (structs, arrays, headers) span the union of their children.
//
// Values are kept raw (an integer, a range of the input); [Tree.ValueText]
// formats them, notes included, only when a renderer asks.
package span

import (
	"encoding/hex"
	"fmt"
	"strconv"
)

// Category is what a byte is part of, for the colour legend.
type Category uint8

// The categories, in legend order.
const (
	CatNone Category = iota
	CatFrame
	CatHeader
	CatRequestBody
	CatRecordBatch
	CatRecord
	CatResponseBody
	CatTagged
)

// Categories lists the legend entries in order.
var Categories = []Category{CatFrame, CatHeader, CatRequestBody, CatRecordBatch, CatRecord, CatResponseBody, CatTagged}

var catNames = [...]string{"", "frame", "rpc header", "request body", "RecordBatch", "Record", "response body", "tagged_fields"}
var catClasses = [...]string{"", "frame", "hdr", "req", "batch", "rec", "resp", "tag"}

// String returns the legend label ("rpc header").
func (c Category) String() string { return catNames[c] }

// Class returns a short identifier for style sheets ("hdr").
func (c Category) Class() string { return catClasses[c] }

// ValueKind tells how a node's value is to be read.
type ValueKind uint8

// Value kinds.
const (
	ValNone     ValueKind = iota // a group with no value of its own
	ValInt                       // Int
	ValBool                      // Int 0/1
	ValFloat                     // Float
	ValString                    // Bytes, Enc/Int = length prefix
	ValBytes                     // Bytes, Enc/Int = length prefix
	ValUUID                      // Bytes (16)
	ValCount                     // a length or count prefix: Int = raw value
	ValArray                     // Int = element count
	ValStruct                    // a struct element
	ValRecords                   // Bytes, Enc/Int = length prefix; children are batches
	ValPresence                  // nullable-struct marker: Int
	// ValText is bytes that read as text (record keys, values and header
	// values that are UTF-8 without control characters other than tab,
	// newline and carriage return): Bytes, shown quoted and as hex.
	ValText
	// ValPrefixOnly is a string, bytes or records value whose length
	// prefix was read and whose bytes were not (the frame ended first,
	// or the prefix is no length): Enc and Prefix are the prefix, and
	// there is no value to show.
	ValPrefixOnly
)

// Enc is how a length prefix was encoded.
type Enc uint8

// Length encodings.
const (
	EncNone    Enc = iota
	EncInt16       // classic string
	EncInt32       // classic bytes/array
	EncCompact     // uvarint N+1
	EncVarint      // zig-zag varint (records)
)

// ShownText is how many bytes of a string a value text prints, quoted;
// ShownHex how many bytes of a bytes value it prints in hex. Renderers
// that write value texts of their own (jsonr's fast paths) use these,
// [AppendLenNote], [AppendCountNote] and [AppendPlural], so that the
// texts stay the same.
const (
	ShownText = 48
	ShownHex  = ShownText / 2
)

// valueView is what value formatting reads from a row of a [Tree].
type valueView struct {
	Bytes  []byte
	Note   string
	Int    int64
	Float  float64
	Prefix int64
	Val    ValueKind
	Enc    Enc
	Null   bool
}

func (n valueView) appendText(dst []byte) []byte {
	switch n.Val {
	case ValNone:
		return dst
	case ValPrefixOnly:
		dst = AppendLenNote(append(dst, "no value"...), n.Enc, n.Prefix)
	case ValInt:
		dst = strconv.AppendInt(append(dst, "= "...), n.Int, 10)
	case ValBool:
		dst = strconv.AppendBool(append(dst, "= "...), n.Int != 0)
	case ValFloat:
		dst = strconv.AppendFloat(append(dst, "= "...), n.Float, 'g', -1, 64)
	case ValString:
		if n.Null {
			dst = append(dst, "= null"...)
		} else {
			dst = appendQuoted(append(dst, "= "...), n.Bytes)
		}
		dst = AppendLenNote(dst, n.Enc, n.Prefix)
	case ValText:
		dst = appendQuoted(append(dst, "= "...), n.Bytes)
		dst = appendHexShort(append(dst, ' '), n.Bytes)
		dst = AppendLenNote(dst, n.Enc, n.Prefix)
	case ValBytes, ValRecords:
		switch {
		case n.Null:
			dst = append(dst, "= null"...)
		case n.Val == ValRecords:
			dst = AppendPlural(append(dst, "= "...), len(n.Bytes), "byte")
		default:
			dst = appendHexShort(append(dst, "= "...), n.Bytes)
		}
		dst = AppendLenNote(dst, n.Enc, n.Prefix)
	case ValUUID:
		dst = append(dst, "= "...)
		if len(n.Bytes) == 16 {
			dst = appendUUID(dst, n.Bytes)
		} else {
			dst = append(dst, FormatUUID(n.Bytes)...)
		}
	case ValCount:
		dst = AppendCountNote(strconv.AppendInt(append(dst, "= "...), n.Int, 10), n.Enc, n.Int)
	case ValArray:
		if n.Null {
			dst = append(dst, "= null"...)
		} else {
			dst = AppendPlural(append(dst, "= "...), int(n.Int), "element")
		}
	case ValStruct:
		if n.Null {
			dst = append(dst, "= null"...)
		} else {
			dst = append(dst, "= struct"...)
		}
	case ValPresence:
		dst = strconv.AppendInt(append(dst, "= "...), n.Int, 10)
		// Int is the wire value: int8 -1 is null; a tagged struct's
		// uvarint marker (Enc == EncCompact) is 0 for null.
		if n.Int < 0 || (n.Enc == EncCompact && n.Int == 0) {
			dst = append(dst, " (null)"...)
		} else {
			dst = append(dst, " (present)"...)
		}
	}
	if n.Note != "" {
		dst = append(append(append(dst, " ("...), n.Note...), ')')
	}
	return dst
}

// AppendCountNote appends what the text of an array or records count n
// (a ValCount row) says after the number: how the prefix encodes it.
func AppendCountNote(dst []byte, e Enc, n int64) []byte {
	switch {
	case e == EncCompact && n == 0:
		return append(dst, " (compact, null)"...)
	case e == EncCompact:
		return append(dst, " (compact, n+1)"...)
	case n == -1:
		return append(dst, " (null)"...)
	}
	return dst
}

// AppendLenNote appends the note on a length prefix (raw value prefix,
// encoding e) that the text of a string, bytes or records value ends with.
func AppendLenNote(dst []byte, e Enc, prefix int64) []byte {
	switch e {
	case EncInt16:
		return append(strconv.AppendInt(append(dst, " (int16 len="...), prefix, 10), ')')
	case EncInt32:
		return append(strconv.AppendInt(append(dst, " (int32 len="...), prefix, 10), ')')
	case EncCompact:
		if prefix == 0 {
			return append(dst, " (compact, 0)"...)
		}
		return append(strconv.AppendInt(append(dst, " (compact, len+1="...), prefix, 10), ')')
	case EncVarint:
		return append(strconv.AppendInt(append(dst, " (varint len="...), prefix, 10), ')')
	}
	return dst
}

// AppendPlural appends "n word", with an s unless n is 1.
func AppendPlural(dst []byte, n int, word string) []byte {
	dst = append(strconv.AppendInt(dst, int64(n), 10), ' ')
	dst = append(dst, word...)
	if n != 1 {
		dst = append(dst, 's')
	}
	return dst
}

func appendQuoted(dst, b []byte) []byte {
	if len(b) > ShownText {
		return append(strconv.AppendQuote(dst, string(b[:ShownText])), "..."...)
	}
	return strconv.AppendQuote(dst, string(b))
}

func appendHexShort(dst, b []byte) []byte {
	dst = append(dst, "0x"...)
	if len(b) > ShownHex {
		return append(hex.AppendEncode(dst, b[:ShownHex]), "..."...)
	}
	return hex.AppendEncode(dst, b)
}

func appendUUID(dst, b []byte) []byte {
	dst = hex.AppendEncode(dst, b[0:4])
	dst = hex.AppendEncode(append(dst, '-'), b[4:6])
	dst = hex.AppendEncode(append(dst, '-'), b[6:8])
	dst = hex.AppendEncode(append(dst, '-'), b[8:10])
	return hex.AppendEncode(append(dst, '-'), b[10:16])
}

// FormatUUID prints 16 bytes in the usual 8-4-4-4-12 form.
func FormatUUID(b []byte) string {
	if len(b) != 16 {
		return fmt.Sprintf("invalid uuid %x", b)
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
