package spec

import "fmt"

// MaxDepth is the deepest nesting of JSON objects and arrays a spec file
// may have. Kafka's deepest specs nest nine levels (a field is an
// object in a "fields" array in an object, so each struct level costs
// two); the limit keeps every recursive walk of a crafted file — the JSON
// parser's, the schema builder's — far from the stack's end.
const MaxDepth = 100

// checkDepth scans the source once, skipping strings and comments, and
// reports the first '{' or '[' that opens level MaxDepth+1. It runs before
// the JSON parser, which recurses once per level.
func (p *parser) checkDepth() *Error {
	src := p.src
	depth := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 >= len(src) {
				break
			}
			switch src[i+1] {
			case '/':
				for i += 2; i < len(src) && src[i] != '\n'; i++ {
				}
			case '*':
				i += 2
				for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
					i++
				}
				i++
			}
		case '{', '[':
			if depth++; depth > MaxDepth {
				return &Error{Pos: p.pos(i), Err: fmt.Errorf("%w: objects and arrays nest deeper than %d levels", ErrTooDeep, MaxDepth)}
			}
		case '}', ']':
			depth-- // unbalanced brackets are the JSON parser's to report
		}
	}
	return nil
}
