package html

import (
	"html/template"
	"strconv"
	"sync"
)

// The "api" template (with "head", "section" and "foot") and the "doc"
// template, written in Go as bytesHTML is: a site has hundreds of API
// pages, and html/template spends a reflective call on each of a page's
// actions and copies every large value (the object tree, the highlighted
// schema) twice on its way to the output. The output is the templates',
// byte for byte, with html/template's escaping in each context;
// TestPageHTMLMatchesTemplate and TestDocHTMLMatchesTemplate render both
// and compare them, so a change to a template must be made here too.

// pageBufs are the buffers pages are assembled in: a page is appended to a
// buffer kept from page to page, then copied out at its exact size.
var pageBufs = sync.Pool{New: func() any { return new([]byte) }}

// render assembles a page with fill into a pooled buffer and returns a
// copy of exactly its size.
func render(fill func(b []byte) []byte) []byte {
	bp := pageBufs.Get().(*[]byte)
	b := fill((*bp)[:0])
	out := make([]byte, len(b))
	copy(out, b)
	if cap(b) <= maxPooledPage {
		*bp = b
		pageBufs.Put(bp)
	}
	return out
}

// maxPooledPage bounds the buffers kept in pageBufs.
const maxPooledPage = 4 << 20

// appendHead appends the "head" template of l.
func appendHead(b []byte, l *layout) []byte {
	b = append(b, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"color-scheme\" content=\"light dark\">\n<title>"...)
	b = appendEscHTML(b, l.Title)
	b = append(b, " · manifester</title>\n<link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\">\n<link rel=\"stylesheet\" href=\"/static/site.css\">\n<script src=\"/static/site.js\" defer></script>\n</head>\n<body class=\"k-"...)
	b = appendEscHTML(b, l.Kind)
	b = append(b, "\">\n<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header class=\"brand\">\n<a class=\"logo\" href=\"/\"><span class=\"mark\" aria-hidden=\"true\">m</span> manifester</a>\n<nav aria-label=\"Site\"><a href=\"/\">All Kafka APIs</a>"...)
	for _, n := range l.Nav {
		b = append(b, ` <a href="`...)
		b = appendURL(b, n.Href)
		b = append(b, `">`...)
		b = appendEscHTML(b, n.Text)
		b = append(b, `</a>`...)
	}
	return append(b, "</nav>\n</header>\n<main id=\"main\">\n"...)
}

// appendFoot appends the "foot" template of l.
func appendFoot(b []byte, l *layout) []byte {
	b = append(b, "</main>\n<footer>"...)
	if l.Footer != "" {
		b = append(b, "<p>"...)
		b = appendEscHTML(b, l.Footer)
		b = append(b, "</p>"...)
	}
	return append(b, "<p>manifester encodes the smallest legal instance of every Kafka request and response from Kafka's own message specs.</p></footer>\n</body>\n</html>\n"...)
}

// appendDoc appends the "doc" template: body in the layout.
func appendDoc(b []byte, l *layout, body template.HTML) []byte {
	b = appendHead(b, l)
	b = append(b, body...)
	return appendFoot(b, l)
}

// appendInt appends n in decimal.
func appendInt[T int | int16 | int32](b []byte, n T) []byte {
	return strconv.AppendInt(b, int64(n), 10)
}

// gapItem stands in the version switcher for the versions a [Window]
// leaves out.
const gapItem = `<li class="gap" title="versions left out">…</li>`

// appendAPI appends the "api" template of l, whose Main is v.
func appendAPI(b []byte, l *layout, v *apiView) []byte {
	b = appendHead(b, l)
	b = append(b, `<nav class="crumbs" aria-label="Breadcrumb"><a href="/">All Kafka APIs</a> / `...)
	b = appendEscHTML(b, v.Title)
	b = append(b, "</nav>\n<h1>"...)
	b = appendEscHTML(b, v.Title)
	for _, x := range v.Badges {
		b = append(b, ` <span class="badge `...)
		b = appendEscHTML(b, x.Class)
		b = append(b, `" title="`...)
		b = appendEscHTML(b, x.Title)
		b = append(b, `">`...)
		b = appendEscHTML(b, x.Text)
		b = append(b, `</span>`...)
	}
	b = append(b, "</h1>\n<nav class=\"versions\" aria-label=\"Versions of "...)
	b = appendEscHTML(b, v.Title)
	b = append(b, `"><span class="label">Versions</span> <ul>`...)
	for i := range v.Versions {
		x := &v.Versions[i]
		if x.GapBefore {
			b = append(b, gapItem...)
		}
		if x.Flexible {
			b = append(b, `<li class="flex`...)
		} else {
			b = append(b, `<li class="classic`...)
		}
		if x.FirstFlexible {
			b = append(b, ` first-flex">`...)
			b = append(b, `<span class="boundary" title="versions from here on are flexible">flexible →</span> `...)
		} else {
			b = append(b, `">`...)
		}
		b = append(b, `<a href="`...)
		b = appendURL(b, x.Href)
		b = append(b, `"`...)
		if x.Current {
			b = append(b, ` aria-current="page"`...)
		}
		b = append(b, ` title="v`...)
		b = appendInt(b, x.V)
		if x.Flexible {
			b = append(b, `: flexible`...)
		} else {
			b = append(b, `: not flexible`...)
		}
		if x.Unstable {
			b = append(b, `, unstable`...)
		}
		b = append(b, `">v`...)
		b = appendInt(b, x.V)
		if x.Unstable {
			b = append(b, '*')
		}
		b = append(b, `</a></li>`...)
	}
	b = append(b, `</ul>`...)
	if len(v.Older) > 0 {
		b = append(b, ` <span class="label older">older releases</span> <ul class="older">`...)
		for i := range v.Older {
			x := &v.Older[i]
			if x.GapBefore {
				b = append(b, gapItem...)
			}
			b = append(b, `<li class="older"><a href="`...)
			b = appendURL(b, x.Href)
			b = append(b, `"`...)
			if x.Current {
				b = append(b, ` aria-current="page"`...)
			}
			b = append(b, ` title="v`...)
			b = appendInt(b, x.V)
			b = append(b, `: `...)
			b = appendEscHTML(b, x.Title)
			b = append(b, `">v`...)
			b = appendInt(b, x.V)
			b = append(b, `</a></li>`...)
		}
		b = append(b, `</ul>`...)
	}
	b = append(b, ` <span class="flexnote">`...)
	b = appendEscHTML(b, v.FlexNote)
	b = append(b, `</span> <a class="json" href="`...)
	b = appendURL(b, v.JSONHref)
	b = append(b, "\">page JSON</a></nav>\n<p class=\"intro\">"...)
	b = appendEscHTML(b, v.Intro)
	b = append(b, "</p>\n"...)
	if v.Note != "" {
		b = append(b, `<p class="note-removed">`...)
		b = appendEscHTML(b, v.Note)
		b = append(b, "</p>\n"...)
	}
	b = append(b, `<dl class="summary">`...)
	for _, it := range v.Summary {
		b = append(b, `<div><dt>`...)
		b = appendEscHTML(b, it.Label)
		b = append(b, `</dt><dd>`...)
		b = appendEscHTML(b, it.Value)
		b = append(b, `</dd></div>`...)
	}
	b = append(b, "</dl>\n<ul class=\"legend\" aria-label=\"Colour legend\">"...)
	for _, it := range v.Legend {
		b = append(b, `<li class="`...)
		b = appendEscHTML(b, it.Class)
		b = append(b, `">`...)
		b = appendEscHTML(b, it.Label)
		b = append(b, `</li>`...)
	}
	b = append(b, "</ul>\n<nav class=\"toc\" aria-label=\"On this page\"><a href=\"#request\">Request</a> <a href=\"#response\">Response</a>"...)
	for _, x := range v.Extras {
		b = append(b, ` <a href="#`...)
		b = appendURLPart(b, x.ID)
		b = append(b, `">`...)
		b = appendEscHTML(b, x.Title)
		b = append(b, `</a>`...)
	}
	b = append(b, "</nav>\n"...)
	for _, sv := range v.Sections {
		b = appendSection(b, sv)
	}
	b = append(b, '\n')
	for _, x := range v.Extras {
		b = append(b, `<section id="`...)
		b = appendEscHTML(b, x.ID)
		b = append(b, `" class="extra"><h2>`...)
		b = appendEscHTML(b, x.Title)
		b = append(b, "</h2>\n"...)
		b = append(b, x.Body...)
		b = append(b, "\n</section>\n"...)
	}
	return appendFoot(b, l)
}

// appendSection appends the "section" template of sv.
func appendSection(b []byte, sv *sectionView) []byte {
	b = append(b, `<section id="`...)
	b = appendEscHTML(b, sv.ID)
	b = append(b, `" class="msg" data-kind="`...)
	b = appendEscHTML(b, sv.ID)
	b = append(b, `" data-hex="`...)
	b = appendEscHTML(b, sv.Hex)
	b = append(b, "\">\n<h2>"...)
	b = appendEscHTML(b, sv.Heading)
	b = append(b, "</h2>\n<p class=\"title\">"...)
	b = appendEscHTML(b, sv.Title)
	b = append(b, "</p>\n"...)
	b = appendBytesHTML(b, sv)
	b = append(b, "\n<h3 id=\""...)
	b = appendEscHTML(b, sv.ID)
	b = append(b, "-tagged\">tagged fields</h3>\n"...)
	if !sv.Flex {
		b = append(b, `<p class="tagged-none">v`...)
		b = appendInt(b, sv.Version)
		b = append(b, " is not a flexible version: no struct has a tagged-field section.</p>\n"...)
	} else {
		if len(sv.Tagged) > 0 {
			b = append(b, "<p>The smallest instance sends none of these (every tagged_fields count above is 0); each could follow its struct's fields, in tag order.</p>\n<table class=\"tagged\">\n<thead><tr><th scope=\"col\">struct</th><th scope=\"col\">tag</th><th scope=\"col\">name</th><th scope=\"col\">type</th><th scope=\"col\">tagged versions</th><th scope=\"col\">description</th></tr></thead>\n<tbody>\n"...)
			for _, ts := range sv.Tagged {
				for i, f := range ts.Fields {
					b = append(b, `<tr>`...)
					if i == 0 {
						b = append(b, `<th scope="rowgroup" rowspan="`...)
						b = appendInt(b, len(ts.Fields))
						b = append(b, `">`...)
						b = appendEscHTML(b, ts.Struct)
						b = append(b, `</th>`...)
					}
					b = append(b, `<td class="num">`...)
					b = appendInt(b, f.Tag)
					b = append(b, `</td><td>`...)
					b = appendEscHTML(b, f.Name)
					b = append(b, `</td><td>`...)
					b = appendEscHTML(b, f.Type)
					b = append(b, `</td><td>`...)
					b = appendEscHTML(b, f.Versions)
					b = append(b, `</td><td class="about">`...)
					b = appendEscHTML(b, f.About)
					b = append(b, "</td></tr>\n"...)
				}
			}
			b = append(b, "</tbody>\n</table>\n"...)
		}
		if len(sv.Untaged) > 0 {
			b = append(b, `<p class="tagged-none">No tagged fields at v`...)
			b = appendInt(b, sv.Version)
			b = append(b, ` in: `...)
			for i, s := range sv.Untaged {
				if i > 0 {
					b = append(b, `, `...)
				}
				b = appendEscHTML(b, s)
			}
			b = append(b, `.</p>`...)
		}
		b = append(b, '\n')
	}
	b = append(b, `<h3>kafka message schema (.json)`...)
	if sv.File != "" {
		b = append(b, ` <span class="file">`...)
		b = appendEscHTML(b, sv.File)
		b = append(b, `</span>`...)
	}
	b = append(b, "</h3>\n"...)
	b = append(b, sv.Schema...)
	return append(b, "\n</section>\n"...)
}
