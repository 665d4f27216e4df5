package histsite

import (
	"html/template"
	"strconv"
	"strings"

	htmlr "github.com/manifester/manifester/internal/render/html"
)

// diffPageHTML writes the "diffpage" template (with "crumbs", "diff" and
// "field") in Go: a build has hundreds of diff pages and html/template
// spends a reflective call on each of their actions. The bytes are the
// template's, with html/template's escaping per context;
// TestDiffPageHTMLMatchesTemplate renders both and compares them, so a
// change to those templates must be made here too.
func diffPageHTML(v *diffPageView) template.HTML {
	var b strings.Builder
	esc := func(s string) { htmlr.WriteEscaped(&b, s) }
	url := func(s string) { htmlr.WriteEscapedURL(&b, s) }
	num := func(n int16) { b.WriteString(strconv.Itoa(int(n))) }
	b.WriteString(`<nav class="crumbs" aria-label="Breadcrumb"><a href="/">All Kafka APIs</a> / <a href="`)
	url(htmlr.APIPath(v.API, -1))
	b.WriteString(`">`)
	esc(v.API)
	b.WriteString(`</a> / <a href="`)
	url(DiffIndexPath(v.API))
	b.WriteString("\">diffs</a></nav>\n<h1>")
	esc(v.API)
	b.WriteString(" v")
	num(v.From)
	b.WriteString(" → v")
	num(v.To)
	if v.Removed != "" {
		b.WriteString(` <span class="badge removed">removed</span>`)
	}
	b.WriteString("</h1>\n")
	if v.Removed != "" {
		b.WriteString(`<p class="note-removed">`)
		esc(v.Removed)
		b.WriteString("</p>\n")
	}
	b.WriteString(`<p class="intro">What changed in `)
	esc(v.API)
	b.WriteString(` from <a href="`)
	url(htmlr.APIPath(v.API, int(v.From)))
	b.WriteString(`">v`)
	num(v.From)
	b.WriteString(`</a> to <a href="`)
	url(htmlr.APIPath(v.API, int(v.To)))
	b.WriteString(`">v`)
	num(v.To)
	b.WriteString(`</a> in Kafka `)
	esc(v.Release)
	b.WriteString(", in the request and in the response: the flexible encoding, the header version, the size of the smallest frame, the fields removed (−), added (+) and changed (~) in each struct, and the spec's own comments about the versions in between.</p>\n")
	writeDiff(&b, v.Diff)
	b.WriteString(string(v.Picker))
	return template.HTML(b.String())
}

// writeDiff is the "diff" template.
func writeDiff(b *strings.Builder, dv *diffView) {
	esc := func(s string) { htmlr.WriteEscaped(b, s) }
	for _, m := range dv.Messages {
		b.WriteString("<h3>")
		esc(m.Kind)
		b.WriteString(": ")
		esc(m.Message)
		b.WriteString("</h3>\n<ul class=\"changes\">")
		item := func(changed bool, label, value string) {
			b.WriteString("<li")
			if changed {
				b.WriteString(` class="chg-mod"`)
			}
			b.WriteString(">")
			b.WriteString(label)
			esc(value)
			b.WriteString("</li>")
		}
		item(m.FlexChanged, "flexible: ", m.Flexible)
		item(m.HeaderChanged, "header version: ", m.Header)
		item(m.SizeChanged, "smallest frame: ", m.Size)
		b.WriteString("</ul>\n")
		if len(m.Structs) > 0 {
			for _, s := range m.Structs {
				b.WriteString("<h4>")
				esc(s.Name)
				b.WriteString("</h4>\n<ul class=\"fields\">")
				for i := range s.Fields {
					writeField(b, &s.Fields[i])
				}
				for _, c := range s.Changed {
					b.WriteString(`<li class="chg-mod">~ `)
					esc(c)
					b.WriteString(`</li>`)
				}
				b.WriteString("</ul>\n")
			}
		} else {
			b.WriteString("<p class=\"nofields\">No field changes.</p>\n")
		}
		if len(m.Comments) > 0 {
			b.WriteString("<div class=\"comments\"><h4>spec comments</h4>\n")
			for _, c := range m.Comments {
				b.WriteString("<blockquote><p>")
				esc(c.Text)
				b.WriteString(` <span class="note">(`)
				esc(m.File)
				b.WriteString(", line ")
				b.WriteString(strconv.Itoa(c.Line))
				b.WriteString(")</span></p></blockquote>\n")
			}
			b.WriteString("</div>\n")
		}
	}
}

// writeField is the "field" template.
func writeField(b *strings.Builder, f *fieldView) {
	b.WriteString("<li")
	if f.Class != "" {
		b.WriteString(` class="`)
		htmlr.WriteEscaped(b, f.Class)
		b.WriteString(`"`)
	}
	b.WriteString(">")
	if f.Mark != "" {
		htmlr.WriteEscaped(b, f.Mark)
		b.WriteString(" ")
	}
	htmlr.WriteEscaped(b, f.Text)
	if len(f.Fields) > 0 {
		b.WriteString(`<ul class="fields">`)
		for i := range f.Fields {
			writeField(b, &f.Fields[i])
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</li>")
}

// changesHTML is the "changes" template (an API page's "changes"
// section), in Go as diffPageHTML is.
func changesHTML(cv *changesView) template.HTML {
	var b strings.Builder
	esc := func(s string) { htmlr.WriteEscaped(&b, s) }
	num := func(n int16) { b.WriteString(strconv.Itoa(int(n))) }
	if cv.Diff != nil {
		b.WriteString("<p>What v")
		num(cv.Version)
		b.WriteString(" of ")
		esc(cv.API)
		b.WriteString(" changed from v")
		num(cv.Diff.From)
		b.WriteString(" in Kafka ")
		esc(cv.Release)
		b.WriteString(".")
		if !cv.NoLink {
			b.WriteString(` <a class="fulldiff" href="`)
			htmlr.WriteEscapedURL(&b, DiffPath(cv.API, cv.Diff.From, cv.Diff.To))
			b.WriteString(`">Full diff v`)
			num(cv.Diff.From)
			b.WriteString(" → v")
			num(cv.Diff.To)
			b.WriteString("</a>")
		}
		b.WriteString("</p>\n")
		writeDiff(&b, cv.Diff)
	} else {
		b.WriteString(`<p class="nochanges">v`)
		num(cv.Version)
		b.WriteString(" is the lowest version of ")
		esc(cv.API)
		b.WriteString(" in Kafka ")
		esc(cv.Release)
		b.WriteString(": there is no previous version to compare it with.")
		if cv.Older != "" {
			b.WriteString(" Older loaded releases also define ")
			esc(cv.Older)
			b.WriteString("; see “Accepted by Kafka” below.")
		}
		b.WriteString("</p>\n")
	}
	b.WriteString(string(cv.Picker))
	return template.HTML(b.String())
}

// acceptedHTML is the "accepted" template (an API page's "Accepted by
// Kafka" section), in Go as diffPageHTML is.
func acceptedHTML(av *acceptedView) template.HTML {
	var b strings.Builder
	esc := func(s string) { htmlr.WriteEscaped(&b, s) }
	orDash := func(s string) {
		if s == "" {
			s = "-"
		}
		esc(s)
	}
	if av.Single {
		b.WriteString(`<p class="nohistory">Only Kafka `)
		esc(av.Newest)
		b.WriteString(" is loaded, so there is no release history: load older releases too (<code>--spec 3.9=PATH --spec ")
		esc(av.Newest)
		b.WriteString("=PATH</code>) to see which releases accept each version.</p>\n")
		return template.HTML(b.String())
	}
	b.WriteString("<p>The loaded releases (")
	for i, l := range av.Labels {
		if i > 0 {
			b.WriteString(", ")
		}
		esc(l)
	}
	b.WriteString(") that accept each version of ")
	esc(av.API)
	b.WriteString(": the first and the last whose spec lists the version as valid (an unstable latest version, which brokers only accept with unstable API versions enabled, does not count).")
	if av.Total > 0 {
		b.WriteString(" Of its ")
		b.WriteString(strconv.Itoa(av.Total))
		b.WriteString(" versions, the table shows those near v")
		b.WriteString(strconv.Itoa(int(av.Version)))
		b.WriteString(", the first and the last; each version’s page shows its own row.")
	}
	b.WriteString("</p>\n<table class=\"accepted\">\n<thead><tr><th scope=\"col\">version</th><th scope=\"col\">request: first</th><th scope=\"col\">request: last</th><th scope=\"col\">response: first</th><th scope=\"col\">response: last</th><th scope=\"col\">unstable in</th></tr></thead>\n<tbody>\n")
	for i := range av.Rows {
		r := &av.Rows[i]
		if r.GapBefore {
			b.WriteString("<tr class=\"gap\"><td colspan=\"6\">…</td></tr>\n")
		}
		b.WriteString("<tr")
		if r.Current {
			b.WriteString(` class="current"`)
		}
		b.WriteString(`><th scope="row">`)
		if r.Link {
			b.WriteString(`<a href="`)
			htmlr.WriteEscapedURL(&b, htmlr.APIPath(av.API, int(r.Version)))
			b.WriteString(`"`)
			if r.Current {
				b.WriteString(` aria-current="page"`)
			}
			b.WriteString(">v")
			b.WriteString(strconv.Itoa(int(r.Version)))
			b.WriteString("</a>")
		} else {
			b.WriteString("v")
			b.WriteString(strconv.Itoa(int(r.Version)))
		}
		b.WriteString("</th><td>")
		orDash(r.ReqFirst)
		b.WriteString("</td><td")
		if r.Gone {
			b.WriteString(` class="gone"`)
		}
		b.WriteString(">")
		orDash(r.ReqLast)
		b.WriteString("</td><td>")
		orDash(r.RespFirst)
		b.WriteString("</td><td>")
		orDash(r.RespLast)
		b.WriteString("</td><td>")
		orDash(r.Unstable)
		b.WriteString("</td></tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	return template.HTML(b.String())
}

// pickerGo is the "picker" template (the compare form), in Go as
// diffPageHTML is.
func pickerGo(pv *pickerView) template.HTML {
	if pv.Inputs {
		return pickerInputs(pv)
	}
	if len(pv.Versions) <= 1 {
		return ""
	}
	var b strings.Builder
	ip := DiffIndexPath(pv.API)
	b.WriteString(`<form class="diffpick" method="get" action="`)
	htmlr.WriteEscapedURL(&b, ip)
	b.WriteString(`" data-base="`)
	htmlr.WriteEscaped(&b, ip)
	b.WriteString(`"><label for="diff-from">Compare</label> <select id="diff-from" name="from">`)
	options := func(sel int16) {
		for _, v := range pv.Versions {
			n := strconv.Itoa(int(v))
			b.WriteString(`<option value="`)
			b.WriteString(n)
			b.WriteString(`"`)
			if v == sel {
				b.WriteString(` selected`)
			}
			b.WriteString(`>v`)
			b.WriteString(n)
			b.WriteString(`</option>`)
		}
	}
	options(pv.From)
	b.WriteString(`</select> <label for="diff-to">with</label> <select id="diff-to" name="to">`)
	options(pv.To)
	b.WriteString(`</select> <button type="submit">Compare</button> <a href="`)
	htmlr.WriteEscapedURL(&b, ip)
	b.WriteString("\">every pair of versions</a></form>\n")
	return template.HTML(b.String())
}

// pickerInputs is the "picker" template's form of two version numbers
// (pickerView.Inputs).
func pickerInputs(pv *pickerView) template.HTML {
	var b strings.Builder
	ip := DiffIndexPath(pv.API)
	num := func(n int16) { b.WriteString(strconv.Itoa(int(n))) }
	input := func(id, name string, value int16) {
		b.WriteString(`<input id="`)
		b.WriteString(id)
		b.WriteString(`" name="`)
		b.WriteString(name)
		b.WriteString(`" type="number" min="`)
		num(pv.Lo)
		b.WriteString(`" max="`)
		num(pv.Hi)
		b.WriteString(`" value="`)
		num(value)
		b.WriteString(`" required>`)
	}
	b.WriteString(`<form class="diffpick" method="get" action="`)
	htmlr.WriteEscapedURL(&b, ip)
	b.WriteString(`" data-base="`)
	htmlr.WriteEscaped(&b, ip)
	b.WriteString(`"><label for="diff-from">Compare</label> `)
	input("diff-from", "from", pv.From)
	b.WriteString(` <label for="diff-to">with</label> `)
	input("diff-to", "to", pv.To)
	b.WriteString(` <button type="submit">Compare</button> <a href="`)
	htmlr.WriteEscapedURL(&b, ip)
	b.WriteString("\">the diffs this site holds</a></form>\n")
	return template.HTML(b.String())
}
