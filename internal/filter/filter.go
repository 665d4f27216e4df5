// Package filter selects Kafka frames by an expression such as
//
//	api == Fetch and error != NONE
//	(topic contains orders || client_id == "billing") && latency_us > 5000
//
// [Compile] parses an expression (and checks its names: fields, API names,
// error names) into a [Filter]; [Filter.Match] evaluates it against the
// facts of one frame ([Frame]). A bad expression gets a [SyntaxError] that
// names the column (counted in characters, from 1) where it goes wrong.
//
// # Fields
//
//	api            the API, by name (Fetch) or key (1); contains looks at the name
//	version        the API version
//	kind           request or response
//	correlation_id the header's correlation id
//	client_id      the request header's client id (a response: its request's)
//	topic          any topic the frame names (topic ids resolved where known)
//	error          any error code in the frame, by name (NOT_LEADER_OR_FOLLOWER) or code (6)
//	latency_us     a response's time since its request, in microseconds
//	size           the frame's size in bytes, size prefix included
//
// # Operators
//
// == != < <= > >= compare; contains tests for a substring (of a name, a
// client id or a topic). and, or, not (also &&, ||, !) and parentheses
// combine comparisons; not binds tightest, then and, then or.
//
// # Fields with several values, or none
//
// topic and error can hold several values in one frame: a comparison is true
// when it holds for at least one of them (error != NONE: some error code in
// the frame is not 0). A field the frame does not have (client_id of a
// request with a null client id, latency_us of a request, error of a frame
// with no error code, api of a response whose request was not captured)
// makes every comparison on it false, != included; use not to select such
// frames (not latency_us > 0).
package filter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/span"
)

// Frame holds the facts of one frame that a filter looks at.
type Frame struct {
	// Kind is "request" or "response".
	Kind string
	// HasAPI is false for a response whose request was not seen: its API
	// and version are unknown.
	HasAPI  bool
	APIKey  int16
	API     string // the API's name, when the spec knows it
	Version int16
	// CorrelationID is the header's correlation id. NoCorrelationID says
	// the frame's bytes end before it: no correlation_id comparison
	// matches (it is not 0).
	CorrelationID   int32
	NoCorrelationID bool
	// ClientID is the request header's client id (for a response, its
	// request's); nil when null or unknown.
	ClientID *string
	// Topics are the topic names the frame carries, topic ids resolved.
	Topics []string
	// Errors are the error codes anywhere in the frame.
	Errors []int16
	// LatencyMicros is a response's time since its request.
	LatencyMicros *int64
	// Size is the frame's size, size prefix included.
	Size int
}

// SyntaxError is a bad expression: what is wrong and where.
type SyntaxError struct {
	// Col is the column, in characters from 1, of the token at fault
	// (one past the last character for an unexpected end).
	Col int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Limits on expressions, so that a crafted one costs little.
const (
	MaxLen   = 4096 // characters
	MaxDepth = 64   // nesting of parentheses and not
)

// Filter is a compiled expression.
type Filter struct {
	root node
	src  string
}

// String returns the expression as given.
func (f *Filter) String() string { return f.src }

// Match reports whether the frame satisfies the expression.
func (f *Filter) Match(fr *Frame) bool { return f.root.eval(fr) }

// NeedsBody reports whether the expression reads what only a frame's body
// holds (topic, error): a front end that keeps no tree of a frame can
// evaluate any other expression from the frame's header, its request and
// its timing.
func (f *Filter) NeedsBody() bool { return readsBody(f.root) }

func readsBody(n node) bool {
	switch n := n.(type) {
	case andNode:
		return readsBody(n.l) || readsBody(n.r)
	case orNode:
		return readsBody(n.l) || readsBody(n.r)
	case notNode:
		return readsBody(n.n)
	case *cmpNode:
		return n.f == fTopic || n.f == fError
	}
	return true // a node of a kind added later: assume the worst
}

// APILookup resolves an API name (case is ignored) to its key, or says
// why not ("unknown API \"Fecth\"; did you mean Fetch?"); nil accepts
// keys only.
type APILookup func(name string) (int16, error)

// Compile parses expr. apis resolves API names.
func Compile(expr string, apis APILookup) (*Filter, error) {
	if n := utf8.RuneCountInString(expr); n > MaxLen {
		return nil, &SyntaxError{Col: MaxLen + 1, Msg: fmt.Sprintf("expression of %d characters is too long (at most %d)", n, MaxLen)}
	}
	if !utf8.ValidString(expr) {
		return nil, &SyntaxError{Col: 1 + utf8.RuneCountInString(validPrefix(expr)), Msg: "not valid UTF-8"}
	}
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, apis: apis, end: utf8.RuneCountInString(expr) + 1}
	if len(toks) == 0 {
		return nil, &SyntaxError{Col: 1, Msg: "empty expression"}
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		t := p.toks[p.pos]
		msg := fmt.Sprintf("unexpected %s", t.describe())
		if t.kind == tokRParen {
			msg = "unmatched )"
		} else if t.kind == tokWord || t.kind == tokString {
			msg += " (join comparisons with and / or)"
		}
		return nil, &SyntaxError{Col: t.col, Msg: msg}
	}
	return &Filter{root: root, src: expr}, nil
}

func validPrefix(s string) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return s[:i]
			}
		}
	}
	return s
}

// Fields lists the field names, for help texts.
var Fields = []string{"api", "version", "kind", "correlation_id", "client_id", "topic", "error", "latency_us", "size"}

// errorCodes maps error names to codes, built from the names package
// annotate gives.
var errorCodes = func() map[string]int16 {
	m := map[string]int16{}
	for c := -1; c < 1000; c++ {
		name := span.ErrorName(int16(c))
		if name != "unknown error code" {
			m[name] = int16(c)
		}
	}
	for code, r := range span.RenamedErrors {
		m[r.Old] = code // the earlier name (kerr's) still resolves
	}
	return m
}()

// ErrorCode resolves an error name (case is ignored) to its code.
func ErrorCode(name string) (int16, bool) {
	c, ok := errorCodes[strings.ToUpper(name)]
	return c, ok
}

// quote renders a value for messages.
func quote(s string) string { return strconv.Quote(s) }
