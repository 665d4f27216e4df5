package filter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tokWord   tokKind = iota + 1 // field, keyword, name or number
	tokString                    // "quoted" or 'quoted'
	tokOp                        // == != < <= > >=
	tokAnd                       // &&
	tokOr                        // ||
	tokNot                       // !
	tokLParen
	tokRParen
)

type token struct {
	kind tokKind
	text string // the word, the unquoted string, or the operator
	col  int    // column of the first character, from 1
}

func (t token) describe() string {
	switch t.kind {
	case tokString:
		return "string " + quote(t.text)
	case tokLParen, tokRParen, tokOp, tokAnd, tokOr, tokNot:
		return quote(t.text)
	}
	return quote(t.text)
}

// wordRune reports whether r may appear in an unquoted word: letters,
// digits and _ . - : / @ + (topic names, client ids, negative numbers).
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_.-:/@+", r)
}

func lex(s string) ([]token, error) {
	var toks []token
	col := 1
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		start := col
		switch {
		case unicode.IsSpace(r):
			i += n
			col++
			continue
		case r == '(' || r == ')':
			k := tokLParen
			if r == ')' {
				k = tokRParen
			}
			toks = append(toks, token{kind: k, text: string(r), col: start})
			i++
			col++
			continue
		case r == '"' || r == '\'':
			text, size, err := quoted(s[i:], r)
			if err != nil {
				return nil, &SyntaxError{Col: start, Msg: err.Error()}
			}
			toks = append(toks, token{kind: tokString, text: text, col: start})
			col += utf8.RuneCountInString(s[i : i+size])
			i += size
			continue
		case wordRune(r):
			j := i
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !wordRune(r2) {
					break
				}
				j += n2
			}
			toks = append(toks, token{kind: tokWord, text: s[i:j], col: start})
			col += utf8.RuneCountInString(s[i:j])
			i = j
			continue
		}
		two := ""
		if i+1 < len(s) {
			two = s[i : i+2]
		}
		switch {
		case two == "==" || two == "!=" || two == "<=" || two == ">=":
			toks = append(toks, token{kind: tokOp, text: two, col: start})
			i += 2
			col += 2
		case two == "&&":
			toks = append(toks, token{kind: tokAnd, text: two, col: start})
			i += 2
			col += 2
		case two == "||":
			toks = append(toks, token{kind: tokOr, text: two, col: start})
			i += 2
			col += 2
		case r == '<' || r == '>':
			toks = append(toks, token{kind: tokOp, text: string(r), col: start})
			i++
			col++
		case r == '!':
			toks = append(toks, token{kind: tokNot, text: "!", col: start})
			i++
			col++
		case r == '=':
			return nil, &SyntaxError{Col: start, Msg: "use == to compare"}
		case r == '&':
			return nil, &SyntaxError{Col: start, Msg: "use && (or and)"}
		case r == '|':
			return nil, &SyntaxError{Col: start, Msg: "use || (or or)"}
		default:
			return nil, &SyntaxError{Col: start, Msg: fmt.Sprintf("unexpected character %s (quote values that hold it)", strconv.QuoteRune(r))}
		}
	}
	return toks, nil
}

// quoted reads a string starting with quote q: Go escapes in "...", none
// in '...'. It returns the text and the bytes read.
func quoted(s string, q rune) (string, int, error) {
	if q == '\'' {
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", 0, fmt.Errorf("unterminated string (no closing ')")
		}
		return s[1 : 1+end], end + 2, nil
	}
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			text, err := strconv.Unquote(s[:j+1])
			if err != nil {
				return "", 0, fmt.Errorf("bad escape in string %s", s[:j+1])
			}
			return text, j + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unterminated string (no closing \")")
}
