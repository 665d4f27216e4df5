package refsite

import (
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
	body, err := render("grammar", &gv)
	if err != nil {
		return x, err
	}
	x.Sections = append(x.Sections, htmlr.Section{ID: "grammar", Title: "Grammar (BNF)", Body: body})
	return x, nil
}
