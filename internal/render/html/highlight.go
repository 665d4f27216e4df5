package html

import (
	"html/template"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
)

// schemaPre wraps highlighted schema text in a focusable, labelled <pre>.
type schemaPre struct{}

func (schemaPre) Start(code bool, styleAttr string) string {
	return `<pre class="schema chroma" tabindex="0"><code>`
}
func (schemaPre) End(code bool) string { return `</code></pre>` }

var (
	jsonLexer = sync.OnceValue(func() chroma.Lexer {
		l := lexers.Get("json")
		if l == nil {
			l = lexers.Fallback
		}
		return chroma.Coalesce(l)
	})
	formatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithPreWrapper(schemaPre{}))
	// noStyle has no entries: with classes on, the colours come from
	// site.css (so dark mode and print can restyle them), not from a style.
	noStyle = chroma.MustNewStyle("manifester", chroma.StyleEntries{chroma.Background: ""})
)

// Highlight returns the schema text (Kafka's commented JSON) as highlighted
// HTML: a <pre> whose tokens carry chroma's short CSS classes (nt, s2, mi,
// kc, c1, p). Every text passes through chroma's escaping; when
// highlighting fails the text is escaped plainly.
func Highlight(src string) template.HTML {
	src = strings.ToValidUTF8(src, "\uFFFD")
	it, err := jsonLexer().Tokenise(nil, src)
	if err == nil {
		var b strings.Builder
		if err = formatter.Format(&b, noStyle, it); err == nil {
			return template.HTML(b.String())
		}
	}
	return template.HTML(`<pre class="schema" tabindex="0"><code>` + template.HTMLEscapeString(src) + `</code></pre>`)
}

// highlightCache memoizes Highlight per source text: every version of an
// API shows the same two schema files.
type highlightCache struct {
	mu sync.Mutex
	m  map[string]template.HTML
}

func (c *highlightCache) get(src string) template.HTML {
	c.mu.Lock()
	h, ok := c.m[src]
	c.mu.Unlock()
	if ok {
		return h
	}
	h = Highlight(src)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]template.HTML{}
	}
	c.m[src] = h
	c.mu.Unlock()
	return h
}
