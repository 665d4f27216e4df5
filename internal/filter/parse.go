package filter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/span"
)

type parser struct {
	toks []token
	pos  int
	apis APILookup
	end  int // column one past the expression
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return token{}, false
}

func (p *parser) errEnd(msg string) error { return &SyntaxError{Col: p.end, Msg: msg} }

func isKeyword(t token, kw string) bool { return t.kind == tokWord && strings.EqualFold(t.text, kw) }

func (p *parser) or(depth int) (node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || !(t.kind == tokOr || isKeyword(t, "or")) {
			return l, nil
		}
		p.pos++
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = orNode{l, r}
	}
}

func (p *parser) and(depth int) (node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || !(t.kind == tokAnd || isKeyword(t, "and")) {
			return l, nil
		}
		p.pos++
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = andNode{l, r}
	}
}

func (p *parser) unary(depth int) (node, error) {
	t, ok := p.peek()
	if !ok {
		return nil, p.errEnd("expression ends where a comparison should follow")
	}
	if depth >= MaxDepth {
		return nil, &SyntaxError{Col: t.col, Msg: fmt.Sprintf("nested more than %d deep", MaxDepth)}
	}
	switch {
	case t.kind == tokNot || isKeyword(t, "not"):
		p.pos++
		n, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	case t.kind == tokLParen:
		p.pos++
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		c, ok := p.peek()
		if !ok {
			return nil, &SyntaxError{Col: t.col, Msg: "unclosed ("}
		}
		if c.kind != tokRParen {
			return nil, &SyntaxError{Col: c.col, Msg: fmt.Sprintf("expected ) or and/or, found %s", c.describe())}
		}
		p.pos++
		return n, nil
	}
	return p.comparison()
}

// field identifies a field.
type field uint8

const (
	fAPI field = iota + 1
	fVersion
	fKind
	fCorrelationID
	fClientID
	fTopic
	fError
	fLatency
	fSize
)

var fieldNames = map[string]field{
	"api": fAPI, "version": fVersion, "kind": fKind, "correlation_id": fCorrelationID,
	"client_id": fClientID, "topic": fTopic, "error": fError, "latency_us": fLatency, "size": fSize,
}

type op uint8

const (
	opEq op = iota + 1
	opNe
	opLt
	opLe
	opGt
	opGe
	opContains
)

var ops = map[string]op{"==": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

func (p *parser) comparison() (node, error) {
	ft, _ := p.peek()
	if ft.kind != tokWord {
		return nil, &SyntaxError{Col: ft.col, Msg: fmt.Sprintf("expected a field (%s), found %s", strings.Join(Fields, ", "), ft.describe())}
	}
	f, ok := fieldNames[strings.ToLower(ft.text)]
	if !ok {
		return nil, &SyntaxError{Col: ft.col, Msg: fmt.Sprintf("unknown field %s (fields: %s)", quote(ft.text), strings.Join(Fields, ", "))}
	}
	p.pos++
	ot, ok := p.peek()
	if !ok {
		return nil, p.errEnd(fmt.Sprintf("expected an operator (== != < <= > >= contains) after %s", ft.text))
	}
	var o op
	switch {
	case ot.kind == tokOp:
		o = ops[ot.text]
	case isKeyword(ot, "contains"):
		o = opContains
	default:
		return nil, &SyntaxError{Col: ot.col, Msg: fmt.Sprintf("expected an operator (== != < <= > >= contains) after %s, found %s", ft.text, ot.describe())}
	}
	p.pos++
	vt, ok := p.peek()
	if !ok {
		return nil, p.errEnd(fmt.Sprintf("expected a value after %s %s", ft.text, ot.text))
	}
	if vt.kind != tokWord && vt.kind != tokString {
		return nil, &SyntaxError{Col: vt.col, Msg: fmt.Sprintf("expected a value after %s %s, found %s", ft.text, ot.text, vt.describe())}
	}
	p.pos++
	return p.build(f, o, ft, vt)
}

func (p *parser) build(f field, o op, ft, vt token) (node, error) {
	c := &cmpNode{f: f, op: o, str: vt.text}
	bad := func(format string, args ...any) error {
		return &SyntaxError{Col: vt.col, Msg: fmt.Sprintf(format, args...)}
	}
	num, numErr := strconv.ParseInt(vt.text, 10, 64)
	isNum := numErr == nil && vt.kind == tokWord
	switch f {
	case fVersion, fCorrelationID, fLatency, fSize:
		if o == opContains {
			return nil, &SyntaxError{Col: ft.col, Msg: fmt.Sprintf("%s is a number: compare it with == != < <= > >=", ft.text)}
		}
		if !isNum {
			return nil, bad("%s compares with a number, not %s", ft.text, quote(vt.text))
		}
		c.num = num
	case fKind:
		if o != opEq && o != opNe {
			return nil, &SyntaxError{Col: ft.col, Msg: "kind compares with == or != only"}
		}
		k := strings.ToLower(vt.text)
		if k != "request" && k != "response" {
			return nil, bad("kind is request or response, not %s", quote(vt.text))
		}
		c.str = k
	case fClientID, fTopic:
		// strings as written
	case fAPI:
		if o == opContains {
			c.str = strings.ToLower(vt.text)
			break
		}
		if isNum {
			c.num = num
			break
		}
		if p.apis == nil {
			return nil, bad("give the API's key (no spec to look up %s)", quote(vt.text))
		}
		key, err := p.apis(vt.text)
		if err != nil {
			return nil, bad("%v", err)
		}
		c.num = int64(key)
	case fError:
		if o == opContains {
			c.str = strings.ToUpper(vt.text)
			break
		}
		if isNum {
			c.num = num
			break
		}
		code, ok := ErrorCode(vt.text)
		if !ok {
			return nil, bad("unknown error name %s (give a name such as NOT_LEADER_OR_FOLLOWER, or a code)", quote(vt.text))
		}
		c.num = int64(code)
	}
	return c, nil
}

// node is a compiled expression.
type node interface{ eval(*Frame) bool }

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type notNode struct{ n node }

func (n andNode) eval(f *Frame) bool { return n.l.eval(f) && n.r.eval(f) }
func (n orNode) eval(f *Frame) bool  { return n.l.eval(f) || n.r.eval(f) }
func (n notNode) eval(f *Frame) bool { return !n.n.eval(f) }

type cmpNode struct {
	f   field
	op  op
	num int64
	str string
}

func (c *cmpNode) eval(f *Frame) bool {
	switch c.f {
	case fAPI:
		if !f.HasAPI {
			return false
		}
		if c.op == opContains {
			return strings.Contains(strings.ToLower(f.API), c.str)
		}
		return cmpInt(int64(f.APIKey), c.op, c.num)
	case fVersion:
		return f.HasAPI && cmpInt(int64(f.Version), c.op, c.num)
	case fKind:
		return (f.Kind == c.str) == (c.op == opEq)
	case fCorrelationID:
		return !f.NoCorrelationID && cmpInt(int64(f.CorrelationID), c.op, c.num)
	case fClientID:
		return f.ClientID != nil && cmpStr(*f.ClientID, c.op, c.str)
	case fTopic:
		for _, t := range f.Topics {
			if cmpStr(t, c.op, c.str) {
				return true
			}
		}
		return false
	case fError:
		for _, e := range f.Errors {
			if c.op == opContains {
				if strings.Contains(span.ErrorName(e), c.str) {
					return true
				}
			} else if cmpInt(int64(e), c.op, c.num) {
				return true
			}
		}
		return false
	case fLatency:
		return f.LatencyMicros != nil && cmpInt(*f.LatencyMicros, c.op, c.num)
	case fSize:
		return cmpInt(int64(f.Size), c.op, c.num)
	}
	return false
}

func cmpInt(a int64, o op, b int64) bool {
	switch o {
	case opEq:
		return a == b
	case opNe:
		return a != b
	case opLt:
		return a < b
	case opLe:
		return a <= b
	case opGt:
		return a > b
	case opGe:
		return a >= b
	}
	return false
}

func cmpStr(a string, o op, b string) bool {
	if o == opContains {
		return strings.Contains(a, b)
	}
	return cmpInt(int64(strings.Compare(a, b)), o, 0)
}
