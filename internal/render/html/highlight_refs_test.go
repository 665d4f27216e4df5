package html

import (
	"strings"
	"testing"
)

// TestCommentReferencesLinked checks that KIP and Jira numbers in schema
// comments become links, that the text stays the same, and that look-alikes
// inside words or without digits stay text.
func TestCommentReferencesLinked(t *testing.T) {
	src := "// See KIP-482 and KAFKA-18659, (KIP-1313); not XKIP-1, KIP-x or KIP-12a; but \"KIP-9\".\n{ \"name\": \"KIP-7\" }\n/* KAFKA-1 */"
	got := string(Highlight(src))
	for _, want := range []string{
		`<a href="` + kipURL + `KIP-482">KIP-482</a>`,
		`<a href="` + jiraURL + `KAFKA-18659">KAFKA-18659</a>`,
		`(<a href="` + kipURL + `KIP-1313">KIP-1313</a>)`,
		`<a href="` + jiraURL + `KAFKA-1">KAFKA-1</a>`,
		`&#34;<a href="` + kipURL + `KIP-9">KIP-9</a>&#34;`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	for _, not := range []string{"KIP-1\"", "KIP-x\"", "KIP-12a\"", "KIP-7\""} {
		if strings.Contains(got, `queryString=`+not) {
			t.Errorf("%s linked in\n%s", not, got)
		}
	}
	if n := strings.Count(got, "<a "); n != 5 {
		t.Errorf("%d links, want 5:\n%s", n, got)
	}
	// The text of the page is still the source.
	var text strings.Builder
	in := false
	for _, r := range got {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			text.WriteRune(r)
		}
	}
	if plain := strings.NewReplacer("&#34;", `"`, "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#39;", "'").Replace(text.String()); plain != src {
		t.Errorf("text changed:\n%q\n%q", plain, src)
	}
}
