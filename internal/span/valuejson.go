package span

import (
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendJSON appends the value as typed JSON, for tools: a
// number for integers, counts, array lengths and presence markers, true
// or false, a number for floats (a string for NaN and the infinities,
// which JSON has not), a string for strings and for bytes that read as
// text (ValText), lowercase hex for other bytes,
// the 8-4-4-4-12 form for uuids, and null for null values. Display
// notes (error names, dates, length prefixes) are left to the text. ok is
// false for nodes with no value of their own (groups, structs, record
// areas, whose children carry the values). Strings are escaped as
// encoding/json escapes them, so the result is also what encoding/json
// writes for it as a json.RawMessage.
func (n valueView) appendJSON(dst []byte) (_ []byte, ok bool) {
	switch n.Val {
	case ValInt, ValCount, ValPresence:
		return strconv.AppendInt(dst, n.Int, 10), true
	case ValBool:
		return strconv.AppendBool(dst, n.Int != 0), true
	case ValFloat:
		f := n.Float
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(append(append(dst, '"'), strconv.FormatFloat(f, 'g', -1, 64)...), '"'), true
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64), true
	case ValString:
		if n.Null {
			return append(dst, "null"...), true
		}
		return AppendJSONString(dst, n.Bytes), true
	case ValText:
		return AppendJSONString(dst, n.Bytes), true // bytes that read as text
	case ValBytes:
		if n.Null {
			return append(dst, "null"...), true
		}
		return append(hex.AppendEncode(append(dst, '"'), n.Bytes), '"'), true
	case ValUUID:
		if len(n.Bytes) != 16 {
			return append(dst, "null"...), true
		}
		return append(appendUUID(append(dst, '"'), n.Bytes), '"'), true
	case ValArray:
		if n.Null {
			return append(dst, "null"...), true
		}
		return strconv.AppendInt(dst, n.Int, 10), true
	case ValStruct, ValRecords:
		if n.Null {
			return append(dst, "null"...), true
		}
	}
	return dst, false
}

// AppendJSONString appends s as a JSON string escaped as encoding/json
// escapes it: quotes, backslashes, control characters, <, >, &, U+2028
// and U+2029, and invalid UTF-8 as U+FFFD.
func AppendJSONString(dst, s []byte) []byte {
	return append(AppendJSONStringBody(append(dst, '"'), s), '"')
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes that encoding/json writes as they are
// (it escapes control characters, quote, backslash, and <, > and &).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// NeedsJSONEscape reports whether [AppendJSONStringBody] may change s:
// exactly for ASCII, and true for any byte outside it (which it writes
// as it is when it is valid UTF-8 other than U+2028 and U+2029).
func NeedsJSONEscape[T []byte | string](s T) bool {
	i := plainWords(s, 0)
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !jsonSafe[c] {
			return true
		}
	}
	return false
}

// Bytes of every lane of a word, for the word-at-a-time scan.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// plainWords returns the first i' >= i such that s[i:i'] holds only
// bytes that [AppendJSONStringBody] writes as they are, reading eight
// bytes at a time: it stops at the first word that holds a byte it
// escapes or one outside ASCII, or fewer than eight bytes from the end.
func plainWords[T []byte | string](s T, i int) int {
	for ; i+8 <= len(s); i += 8 {
		_ = s[i+7]
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if escapesIn(x) {
			break
		}
	}
	return i
}

// escapesIn reports whether the word x holds a byte outside ASCII or one
// that encoding/json escapes: below 0x20, '"', '&' (0x22 and 0x26, which
// differ in one bit), '<', '>' (0x3c and 0x3e, the same) and '\'. With
// no lane at or above 0x80 (checked first, in the same expression) the
// subtractions borrow across lanes only from a lane that matched, so
// the answer for the word is exact.
func escapesIn(x uint64) bool {
	t := x | (x-0x20*lanes01)&^x
	y := (x ^ 0x22*lanes01) &^ (0x04 * lanes01)
	t |= (y - lanes01) &^ y
	y = (x ^ 0x3c*lanes01) &^ (0x02 * lanes01)
	t |= (y - lanes01) &^ y
	y = x ^ 0x5c*lanes01
	t |= (y - lanes01) &^ y
	return t&lanes80 != 0
}

// AppendJSONStringBody appends s escaped as [AppendJSONString] escapes it,
// without the quotes.
func AppendJSONStringBody[T []byte | string](dst []byte, s T) []byte {
	// Plain ASCII goes a word at a time: from the start, and again after
	// an ASCII byte escaped (JSON in a string, lines of a log) unless the
	// last try found the next word not plain (escapes are dense there:
	// bytes go one at a time for a while). After a byte outside ASCII
	// the bytes go one at a time, as most text that has one has more.
	start, wordAt := 0, 0
	for i := plainWords(s, 0); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			if i >= wordAt {
				if j := plainWords(s, i); j > i {
					i = j
				} else {
					wordAt = i + 16
				}
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
