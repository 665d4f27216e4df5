package site

import "testing"

func TestValidPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/":                             true,
		"/apis/Fetch/":                  true,
		"/apis/Fetch/diff/v12..v13/":    true,
		"/vectors/4.1.jsonl":            true,
		"/apis/../etc/passwd":           false,
		"/apis/..":                      false,
		"/apis/./x":                     false,
		"//x":                           false,
		"/a//b":                         false,
		"apis/Fetch/":                   false,
		"/a\\..\\b":                     false,
		"/apis/Fetch/diff/v12..v13/../": false,
	} {
		if got := validPath(p); got != want {
			t.Errorf("validPath(%q) = %v, want %v", p, got, want)
		}
	}
	b := &Builder{assets: map[string]*Asset{}}
	if err := b.Add("/x/../y", TypeHTML, nil); err == nil {
		t.Error("Add accepted a .. segment")
	}
	if err := b.Add("/x/", TypeHTML, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Add("/x/", TypeHTML, []byte("b")); err == nil {
		t.Error("Add accepted a path twice")
	}
	if err := b.Replace("/x/", TypeHTML, []byte("c")); err != nil || string(b.assets["/x/"].Body) != "c" || !b.Has("/x/") {
		t.Errorf("Replace: %v", err)
	}
}
