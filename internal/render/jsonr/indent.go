package jsonr

import "bytes"

// appendIndent appends the compact JSON src to dst indented as
// json.Indent(dst, src, "", "  ") writes it: a newline and two spaces per
// level before every member and element, ": " after keys, empty objects
// and arrays kept as {} and []. src must be valid compact JSON, as this
// package writes it (no whitespace outside strings); strings are copied
// as they are, skipped with IndexByte.
func appendIndent(dst, src []byte) []byte {
	depth := 0
	newline := func(b []byte) []byte {
		b = append(b, '\n')
		for i := 0; i < depth; i++ {
			b = append(b, ' ', ' ')
		}
		return b
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			// Copy the string through its closing quote.
			j := i + 1
			for {
				k := bytes.IndexAny(src[j:], `"\`)
				if k < 0 {
					return append(dst, src[i:]...) // not valid JSON; keep it all
				}
				j += k
				if src[j] == '\\' {
					if j += 2; j >= len(src) {
						return append(dst, src[i:]...)
					}
					continue
				}
				break
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			dst = newline(dst)
		case '}', ']':
			depth--
			dst = append(newline(dst), c)
		case ',':
			dst = newline(append(dst, ','))
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
