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

// NeedsJSONEscape reports whether [AppendJSONStringBody] would change s.
func NeedsJSONEscape[T []byte | string](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !jsonSafe[c] {
			return true
		}
	}
	return false
}

// AppendJSONStringBody appends s escaped as [AppendJSONString] escapes it,
// without the quotes.
func AppendJSONStringBody[T []byte | string](dst []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); {
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
