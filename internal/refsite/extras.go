package refsite

import (
	"html/template"
	"strings"

	"github.com/manifester/manifester/internal/site"

	htmlr "github.com/manifester/manifester/internal/render/html"
)

type grammarView struct {
	Request, Response []Production
}

// pageExtras adds the grammar section to an API page.
func pageExtras(pc *site.PageContext) (htmlr.Extras, error) {
	var x htmlr.Extras
	if pc.API == nil || pc.Page == nil {
		return x, nil
	}
	gv := grammarView{
		Request:  Grammar(pc.API.Name, "Request", pc.API.Request, pc.Version),
		Response: Grammar(pc.API.Name, "Response", pc.API.Response, pc.Version),
	}
	if gv.Request == nil && gv.Response == nil {
		return x, nil
	}
	body := grammarHTML(&gv)
	x.Sections = append(x.Sections, htmlr.Section{ID: "grammar", Title: "Grammar (BNF)", Body: body})
	return x, nil
}

// grammarHTML is the "grammar" template in Go (as package html writes
// its API pages): every API page has one. TestGrammarHTMLMatchesTemplate
// compares the two, so a change to the template must be made here too.
func grammarHTML(gv *grammarView) template.HTML {
	var b strings.Builder
	b.WriteString("<p>The request and the response at this version in the notation of Kafka's protocol guide: field names in snake_case, <code>[x]</code> for an array, one production per field below the message, tagged fields left out (see the tagged-field tables above).</p>\n")
	for _, g := range []struct {
		id    string
		prods []Production
	}{{"grammar-request", gv.Request}, {"grammar-response", gv.Response}} {
		if len(g.prods) > 0 {
			b.WriteString(`<pre class="bnf" id="`)
			b.WriteString(g.id)
			b.WriteString(`">`)
			for _, p := range g.prods {
				htmlr.WriteEscaped(&b, p.String())
				b.WriteString("\n")
			}
			b.WriteString("</pre>")
		}
		b.WriteString("\n")
	}
	return template.HTML(b.String())
}
