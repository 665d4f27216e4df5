package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrDuplicate is the cause of an [Error] for a key given twice in one
// JSON object (encoding/json would keep the last silently).
var ErrDuplicate = fmt.Errorf("%w: duplicate key", ErrSyntax)

// maxNesting bounds the nesting of objects and arrays, as encoding/json's
// decoder does.
const maxNesting = 10000

// scanner reads the JSON tokens of data = src[base:end] in one pass, in
// place: it checks the syntax as encoding/json does, refuses a key given
// twice in one object, a string that is not text and nesting beyond
// maxNesting, and keeps the path of where it is (formatted only for an
// error). It keeps no tree: what it holds at once is the path, the keys
// of the objects open and one string being decoded.
//
// The first such error ends the read: it is fail, and every method does
// nothing once it is set. Such an error comes before any error about the
// values (the schema's), as when the whole document was parsed first.
type scanner struct {
	data  []byte // src[base:], up to the end of the JSON value
	src   []byte // the input, where lines and columns are counted
	base  int
	root  string
	pos   int   // the next byte of data to read
	fail  error // the first syntax error; the read ends there
	depth int   // objects and arrays open

	path  []int // a key's offset in data (>= 0) or -1-index of an array element
	keys  []int // the keys of the objects open, outermost first (where they start)
	seed  maphash.Seed
	frame []skipFrame // skip's stack
	str   []byte      // the last string read: in data, or in buf when it had escapes
	buf   []byte
}

// keyRef is a key of an open object: its text is data[at:end] (between
// the quotes), with escapes when esc.
type keyRef struct {
	at, end int
	esc     bool
}

// keySet is the keys of one open object, p.keys[start:], for finding a
// key given twice; table indexes them by hash once there are many. A key
// takes 8 bytes in keys and 8 to 16 in table: the text stays in data.
type keySet struct {
	start int
	table []int32 // 1 + index in p.keys[start:], 0 when empty
}

// skipFrame is an object or array open in skip.
type skipFrame struct {
	keys keySet
	obj  bool
	n    int // elements or keys read
}

func newScanner(src []byte, start, end int, root string) *scanner {
	return &scanner{data: src[start:end], src: src, base: start, root: root, seed: maphash.MakeSeed()}
}

// lineCol is "line L, column C" of offset off of data, counted in src.
func (p *scanner) lineCol(off int) string { return lineCol(p.src, int64(p.base+off)) }

// pathString is the path of the value being read ("Msg.Topics[0].Name").
func (p *scanner) pathString() string {
	b := []byte(p.root)
	for _, e := range p.path {
		if e >= 0 {
			b = append(append(b, '.'), p.keyText(p.keyAt(e))...)
		} else {
			b = strconv.AppendInt(append(b, '['), int64(-1-e), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

// keyAt is the key whose content starts at offset at of data.
func (p *scanner) keyAt(at int) keyRef {
	k := keyRef{at: at, end: at}
	for p.data[k.end] != '"' {
		if p.data[k.end] == '\\' {
			k.esc = true
			k.end++
		}
		k.end++
	}
	return k
}

// keyBytes is the text of key k, checked to be text: data itself
// without escapes, else a copy.
func (p *scanner) keyBytes(k keyRef) []byte {
	if !k.esc {
		return p.data[k.at:k.end]
	}
	return appendUnquoted(nil, p.data[k.at:k.end])
}

// keyText is the text of key k as encoding/json reads it, U+FFFD for
// what is not text, for paths and messages.
func (p *scanner) keyText(k keyRef) []byte {
	if raw := p.data[k.at:k.end]; !k.esc && utf8.Valid(raw) {
		return raw
	}
	return appendUnquoted(nil, p.data[k.at:k.end])
}

// errorAt is an [Error] at the current path.
func (p *scanner) errorAt(err error) error { return &Error{Path: p.pathString(), Err: err} }

// syntax sets fail for data that stops being JSON at offset at (the end
// of data: the JSON ends too early). encoding/json's scanner, run on data
// up to that byte, words the error, as its decoder does: each byte is
// read once, so both stop at the same one.
func (p *scanner) syntax(at int) {
	if p.fail != nil {
		return
	}
	if at >= len(p.data) {
		p.fail = &Error{Err: fmt.Errorf("%w: unexpected end of the JSON input", ErrSyntax)}
		return
	}
	var none struct{}
	err := json.Unmarshal(p.data[:at+1], &none)
	if err == nil {
		err = fmt.Errorf("invalid character %q", p.data[at])
	}
	p.fail = syntaxError(p.src, int64(p.base), err)
}

// trailing sets fail when anything but space follows the value, with the
// offset encoding/json's decoder gives for its next token.
func (p *scanner) trailing() {
	p.ws()
	if p.fail != nil || p.pos == len(p.data) {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(p.data[p.pos:]))
	dec.UseNumber()
	if _, err := dec.Token(); err != io.EOF {
		p.fail = &Error{Err: fmt.Errorf("%w at %s: data after the JSON object", ErrSyntax, p.lineCol(p.pos+int(dec.InputOffset())))}
	}
}

// ws skips white space.
func (p *scanner) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte (0 at the end).
func (p *scanner) peek() byte {
	p.ws()
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

// jsonTypeOf names the JSON type of the value that starts with c.
func jsonTypeOf(c byte) string {
	switch c {
	case 'n':
		return "null"
	case 't', 'f':
		return "a bool"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// open starts the object or array at pos, within the nesting bound.
func (p *scanner) open() bool {
	if p.fail != nil {
		return false
	}
	if p.depth >= maxNesting {
		p.fail = &Error{Err: fmt.Errorf("%w at %s: nested more than %d deep", ErrSyntax, p.lineCol(p.pos), maxNesting)}
		return false
	}
	p.depth++
	p.pos++
	p.path = append(p.path, -1)
	return true
}

func (p *scanner) close() {
	p.depth--
	p.pos++
	p.path = p.path[:len(p.path)-1]
}

// nextElem moves to element i of the array open (i == 0: the first),
// false when the array ends there (or fail is set).
func (p *scanner) nextElem(i int) bool {
	if p.fail != nil {
		return false
	}
	c := p.peek()
	switch {
	case c == ']':
		p.close()
		return false
	case i > 0 && c != ',':
		p.syntax(p.pos)
		return false
	case i > 0:
		p.pos++
	}
	p.path[len(p.path)-1] = -1 - i
	return true
}

// nextKey reads key i of the object open (i == 0: the first), a string
// that is text, false when the object ends there (or fail is set). The
// caller then calls dupKey (or addKey itself) and colon.
func (p *scanner) nextKey(i int, ks *keySet) (keyRef, bool) {
	if p.fail != nil {
		return keyRef{}, false
	}
	c := p.peek()
	switch {
	case c == '}':
		p.keys = p.keys[:ks.start]
		p.close()
		return keyRef{}, false
	case i > 0 && c != ',':
		p.syntax(p.pos)
		return keyRef{}, false
	case i > 0:
		p.pos++
		c = p.peek()
	}
	if c != '"' {
		p.syntax(p.pos)
		return keyRef{}, false
	}
	quote := p.pos
	k, suspect := p.scanString()
	if p.fail != nil {
		return keyRef{}, false
	}
	p.path[len(p.path)-1] = k.at
	if suspect && !p.checkText(quote) {
		return keyRef{}, false
	}
	return k, true
}

// key is nextKey, the check that the key is new in ks, and colon.
func (p *scanner) key(i int, ks *keySet) (keyRef, bool) {
	k, ok := p.nextKey(i, ks)
	if !ok {
		return k, false
	}
	if p.addKey(ks, k) {
		p.duplicate(k)
		return k, false
	}
	return k, p.colon()
}

// duplicate sets fail for key k, given twice.
func (p *scanner) duplicate(k keyRef) {
	p.fail = &Error{Path: p.pathString(), Err: fmt.Errorf("%w %q at %s (each key may be given once)", ErrDuplicate, p.keyText(k), p.lineCol(k.at-1))}
}

// colon reads the colon after a key.
func (p *scanner) colon() bool {
	if p.peek() != ':' {
		p.syntax(p.pos)
		return false
	}
	p.pos++
	return true
}

// checkText refuses the string at offset quote when it holds a byte that
// is not UTF-8 or a \u escape of half a surrogate pair (encoding/json
// would put U+FFFD in their place).
func (p *scanner) checkText(quote int) bool {
	off, why := notText(p.data[quote:])
	if off < 0 {
		return true
	}
	p.fail = p.errorAt(fmt.Errorf("%w at %s: %s (bytes that are not UTF-8 are written {\"hex\": ...})", ErrNotUTF8, p.lineCol(quote+off), why))
	return false
}

// plainInString marks the bytes a string holds as they are: not the
// quote, the backslash, a control byte or a byte beyond ASCII.
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString reads the string at pos (its quote): its content, and
// suspect when it may not be text (a byte beyond ASCII or a \u escape of
// a surrogate), for checkText.
func (p *scanner) scanString() (k keyRef, suspect bool) {
	d := p.data
	i := p.pos + 1
	k.at = i
	for {
		for i < len(d) && plainInString[d[i]] {
			i++
		}
		if i >= len(d) {
			p.syntax(i)
			return k, false
		}
		switch c := d[i]; {
		case c == '"':
			k.end = i
			p.pos = i + 1
			return k, suspect
		case c == '\\':
			k.esc = true
			if i+1 >= len(d) {
				p.syntax(i + 1)
				return k, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				var r rune
				for j := i + 2; j < i+6; j++ {
					if j >= len(d) {
						p.syntax(j)
						return k, false
					}
					h := unhex(d[j])
					if h < 0 {
						p.syntax(j)
						return k, false
					}
					r = r<<4 | h
				}
				suspect = suspect || utf16.IsSurrogate(r)
				i += 6
			default:
				p.syntax(i + 1)
				return k, false
			}
		case c < 0x20:
			p.syntax(i)
			return k, false
		default:
			suspect = true
			i++
		}
	}
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// text reads the string value at pos into p.str (decoded), false when
// fail is set.
func (p *scanner) text() bool {
	quote := p.pos
	k, suspect := p.scanString()
	if p.fail != nil || suspect && !p.checkText(quote) {
		return false
	}
	if k.esc {
		p.buf = appendUnquoted(p.buf[:0], p.data[k.at:k.end])
		p.str = p.buf
	} else {
		p.str = p.data[k.at:k.end]
	}
	return true
}

// appendUnquoted appends the text of s, the content of a JSON string
// checked by scanString, as encoding/json reads it: U+FFFD for a byte
// that is not UTF-8 and for half a surrogate pair.
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i = appendEscape(&dst, s, i)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
		}
	}
	return dst
}

// appendEscape appends the text of the escape at s[i:], returning the
// offset after it.
func appendEscape(dst *[]byte, s []byte, i int) int {
	switch c := s[i+1]; c {
	case 'b':
		*dst = append(*dst, '\b')
	case 'f':
		*dst = append(*dst, '\f')
	case 'n':
		*dst = append(*dst, '\n')
	case 'r':
		*dst = append(*dst, '\r')
	case 't':
		*dst = append(*dst, '\t')
	case 'u':
		r := hex4(s[i+2:])
		if utf16.IsSurrogate(r) {
			if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(s[i+8:])); pair != utf8.RuneError {
					*dst = utf8.AppendRune(*dst, pair)
					return i + 12
				}
			}
			r = utf8.RuneError
		}
		*dst = utf8.AppendRune(*dst, r)
		return i + 6
	default:
		*dst = append(*dst, c)
	}
	return i + 2
}

// number reads the number at pos, returning its text.
func (p *scanner) number() []byte {
	d, start := p.data, p.pos
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digits(d, i)
	default:
		p.syntax(i)
		return nil
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.syntax(i)
			return nil
		}
		i = digits(d, i)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.syntax(i)
			return nil
		}
		i = digits(d, i)
	}
	p.pos = i
	return d[start:i]
}

func digits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

// literal reads true, false or null at pos, as word says.
func (p *scanner) literal(word string) bool {
	for j := 0; j < len(word); j++ {
		if p.pos+j >= len(p.data) || p.data[p.pos+j] != word[j] {
			p.syntax(p.pos + j)
			return false
		}
	}
	p.pos += len(word)
	return true
}

// scalar reads a string, number or literal at pos without keeping it.
func (p *scanner) scalar(c byte) {
	switch c {
	case '"':
		quote := p.pos
		if _, suspect := p.scanString(); p.fail == nil && suspect {
			p.checkText(quote)
		}
	case 't':
		p.literal("true")
	case 'f':
		p.literal("false")
	case 'n':
		p.literal("null")
	default:
		p.number()
	}
}

// skip reads the value at pos without keeping it, with every check of a
// value kept (syntax, keys given twice, text, nesting). It keeps its own
// stack rather than recursing: its memory is a few words an open object
// or array.
func (p *scanner) skip() {
	base := len(p.frame)
	for p.fail == nil {
		c := p.peek()
		if c == '{' || c == '[' {
			if !p.open() {
				return
			}
			p.frame = append(p.frame, skipFrame{obj: c == '{', keys: keySet{start: len(p.keys)}})
		} else {
			p.scalar(c)
		}
		// Move to the next value, closing what ends before it.
		for p.fail == nil {
			if len(p.frame) == base {
				return
			}
			f := &p.frame[len(p.frame)-1]
			more := false
			if f.obj {
				_, more = p.key(f.n, &f.keys)
			} else {
				more = p.nextElem(f.n)
			}
			f.n++
			if more {
				break
			}
			p.frame = p.frame[:len(p.frame)-1]
		}
	}
	p.frame = p.frame[:base]
}

// smallKeySet is the count of keys compared one by one; beyond it a key
// set is hashed.
const smallKeySet = 16

// addKey adds k to ks, true when ks holds it already.
func (p *scanner) addKey(ks *keySet, k keyRef) bool {
	n := len(p.keys) - ks.start
	if n < smallKeySet {
		for _, at := range p.keys[ks.start:] {
			if p.sameKey(p.keyAt(at), k) {
				return true
			}
		}
		p.pushKey(k)
		return false
	}
	if 2*(n+1) > len(ks.table) {
		p.rehash(ks, max(4*smallKeySet, 2*len(ks.table)))
	}
	if p.probe(ks, k, true) {
		return true
	}
	p.pushKey(k)
	return false
}

// pushKey adds k to p.keys, doubling its room when it is full (append
// grows a large slice by a quarter, allocating five times its size on the
// way).
func (p *scanner) pushKey(k keyRef) {
	if len(p.keys) == cap(p.keys) {
		p.keys = append(make([]int, 0, max(64, 2*cap(p.keys))), p.keys...)
	}
	p.keys = append(p.keys, k.at)
}

// rehash makes ks's table size slots (a power of two) over its keys.
func (p *scanner) rehash(ks *keySet, size int) {
	ks.table = make([]int32, size)
	keys := p.keys
	for i := ks.start; i < len(keys); i++ {
		p.keys = keys[:i]
		p.probe(ks, p.keyAt(keys[i]), true)
		p.keys = keys[:i+1]
	}
	p.keys = keys
}

// probe looks k up in ks's table, true when it is there; when not and
// add, it takes the free slot for the key that will be p.keys[len].
func (p *scanner) probe(ks *keySet, k keyRef, add bool) bool {
	mask := len(ks.table) - 1
	h := int(maphash.Bytes(p.seed, p.keyBytes(k)))
	for i := h & mask; ; i = (i + 1) & mask {
		slot := ks.table[i]
		if slot == 0 {
			if add {
				ks.table[i] = int32(len(p.keys) - ks.start + 1)
			}
			return false
		}
		if p.sameKey(p.keyAt(p.keys[ks.start+int(slot)-1]), k) {
			return true
		}
	}
}

// sameKey reports whether keys a and b have the same text.
func (p *scanner) sameKey(a, b keyRef) bool {
	if !a.esc && !b.esc {
		return bytes.Equal(p.data[a.at:a.end], p.data[b.at:b.end])
	}
	return bytes.Equal(p.keyBytes(a), p.keyBytes(b))
}

// keyIs reports whether key k is the text s.
func (p *scanner) keyIs(k keyRef, s string) bool {
	if !k.esc {
		return string(p.data[k.at:k.end]) == s
	}
	return string(p.keyBytes(k)) == s
}

// keyLess reports whether key a comes before key b in byte order.
func (p *scanner) keyLess(a, b keyRef) bool {
	return bytes.Compare(p.keyBytes(a), p.keyBytes(b)) < 0
}

// notText scans the JSON string at the start of b (from its opening
// quote) and returns the offset of its first byte that is not UTF-8, or
// of its first \u escape of half a surrogate pair, and what it is; -1 when
// there is none.
func notText(b []byte) (int, string) {
	for i := 1; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			return -1, ""
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r := hex4(b[i+2:])
			if !utf16.IsSurrogate(r) {
				i += 6
				continue
			}
			if r < 0xdc00 && i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo := hex4(b[i+8:]); lo >= 0xdc00 && lo <= 0xdfff {
					i += 12
					continue
				}
			}
			return i, fmt.Sprintf("%s is half a surrogate pair", b[i:i+6])
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return i, fmt.Sprintf("byte 0x%02x", c)
			}
			i += n
		}
	}
	return -1, ""
}

// hex4 reads the 4 hex digits of a \u escape (-1 when they are not).
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

// countElements returns the count of elements of the array at pos,
// looking ahead without checking (a capacity, at most len(data)): the
// reader then makes its slice of kids once, at its size.
func (p *scanner) countElements() int {
	d := p.data
	depth, n, empty := 0, 0, true
	for i := p.pos; i < len(d); i++ {
		switch d[i] {
		case '"':
			i = stringEnd(d, i)
			empty = false
		case '[', '{':
			depth++
			if depth > 1 {
				empty = false
			}
		case ']', '}':
			depth--
			if depth == 0 {
				if empty {
					return 0
				}
				return n + 1
			}
		case ',':
			if depth == 1 {
				n++
			}
		case ' ', '\t', '\r', '\n':
		default:
			empty = false
		}
	}
	return n
}

// stringEnd is the offset of the quote that closes the string whose
// opening quote is d[i] (len(d) when none does).
func stringEnd(d []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			return len(d)
		}
		i += j
		escaped := false
		for k := i - 1; k >= 0 && d[k] == '\\'; k-- {
			escaped = !escaped
		}
		if !escaped {
			return i
		}
		i++
	}
}
