package filter

import "testing"

// FuzzCompile: any expression compiles or fails with a SyntaxError whose
// column lies within it; compiled ones evaluate on every test frame.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"api == Fetch and error != NONE", "!(topic contains 'a' || size > 3)", `client_id == "x\"y"`, "((", "a = b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr, apis)
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("%q: %T %v", expr, err, err)
			}
			if n := len([]rune(expr)); se.Col < 1 || se.Col > max(n+1, MaxLen+1) {
				t.Fatalf("%q: column %d outside 1..%d", expr, se.Col, n+1)
			}
			return
		}
		for _, fr := range frames {
			flt.Match(fr)
		}
	})
}
