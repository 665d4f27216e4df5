package html

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
)

// bytesHTML writes the "bytes" template (byte grid, hex and object tree)
// of an API page's section in Go: it is most of a page, and html/template
// spends a reflective call on every one of its thousands of actions per
// page. The output is the template's, byte for byte, with the same
// escaping html/template applies in each context (the text and attribute
// escaper, the URL escaper after "#" and the URL filter and normalizer of
// a whole href); TestBytesHTMLMatchesTemplate renders both and compares
// them, so a change to the template must be made here too. The decode
// page still renders the template.
func bytesHTML(sv *sectionView) template.HTML {
	var b strings.Builder
	b.Grow(256 + len(sv.Grid)*16*48 + len(sv.Tree)*400)
	if sv.Error != "" {
		b.WriteString(`<p class="error" role="alert">`)
		escHTML(&b, sv.Error)
		b.WriteString(`</p>`)
	}
	b.WriteString("\n<div class=\"bytes-pane\">\n<div class=\"tools\" hidden><button type=\"button\" data-copy=\"frame\">copy hex</button> <button type=\"button\" data-copy=\"field\" disabled>copy field hex</button> <output class=\"sel\" aria-live=\"polite\">Point at a byte or a tree row; click to pin.</output></div>\n<div class=\"gridwrap\">\n<table class=\"grid\" aria-label=\"byte layout of the ")
	escHTML(&b, sv.Kind)
	b.WriteString("\">\n<caption>byte layout (")
	b.WriteString(strconv.Itoa(sv.Size))
	b.WriteString(" bytes, 16 bytes per row)</caption>\n<thead><tr><th scope=\"col\" class=\"off\"><span class=\"vh\">offset</span></th>")
	for _, h := range hexColumns {
		b.WriteString(`<th scope="col">`)
		b.WriteString(h)
		b.WriteString(`</th>`)
	}
	b.WriteString("<th scope=\"col\" class=\"asc\">ASCII</th></tr></thead>\n<tbody>\n")
	for i := range sv.Grid {
		g := &sv.Grid[i]
		b.WriteString(`<tr><th scope="row" class="off">`)
		escHTML(&b, g.Off)
		b.WriteString(`</th>`)
		for j := range g.Cells {
			c := &g.Cells[j]
			b.WriteString(`<td class="b `)
			escHTML(&b, c.Class)
			b.WriteString(`" data-o="`)
			b.WriteString(strconv.Itoa(c.Off))
			b.WriteString(`" data-r="`)
			b.WriteString(strconv.Itoa(c.R))
			if c.First {
				b.WriteString(`" tabindex="0">`)
			} else {
				b.WriteString(`" tabindex="-1">`)
			}
			escHTML(&b, c.Hex)
			b.WriteString(`</td>`)
		}
		for range g.Pad {
			b.WriteString(`<td class="pad"></td>`)
		}
		b.WriteString(`<td class="asc">`)
		escHTML(&b, g.ASCII)
		b.WriteString("</td></tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n</div>\n</div>\n<details class=\"hex\"><summary>hex</summary><code>")
	escHTML(&b, sv.Hex)
	b.WriteString("</code></details>\n<h3>object tree</h3>\n<div class=\"treewrap\">\n<table class=\"tree\">\n<thead><tr><th scope=\"col\">field</th><th scope=\"col\">type</th><th scope=\"col\">value</th><th scope=\"col\">[offset, size]</th><th scope=\"col\">description</th></tr></thead>\n<tbody>\n")
	for i := range sv.Tree {
		r := &sv.Tree[i]
		b.WriteString(`<tr id="`)
		escHTML(&b, r.ID)
		b.WriteString(`" class="`)
		escHTML(&b, r.Class)
		if r.Leaf {
			b.WriteString(` leaf`)
		}
		if r.Error != "" {
			b.WriteString(` err`)
		}
		b.WriteString(`" data-i="`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`" data-o="`)
		b.WriteString(strconv.Itoa(r.Off))
		b.WriteString(`" data-n="`)
		b.WriteString(strconv.Itoa(r.Size))
		b.WriteString(`" data-p="`)
		b.WriteString(strconv.Itoa(r.Parent))
		b.WriteString(`"><th scope="row"><span class="pfx" aria-hidden="true">`)
		escHTML(&b, r.Prefix)
		b.WriteString(`</span><a href="#`)
		escURLPart(&b, r.ID)
		b.WriteString(`">`)
		escHTML(&b, r.Name)
		b.WriteString(`</a></th><td class="ty">`)
		escHTML(&b, r.Type)
		b.WriteString(`</td><td class="val">`)
		if r.ErrHref != "" {
			b.WriteString(`<a href="`)
			escURL(&b, r.ErrHref)
			b.WriteString(`">`)
			escHTML(&b, r.Value)
			b.WriteString(`</a>`)
		} else {
			escHTML(&b, r.Value)
		}
		b.WriteString(`</td><td class="span">`)
		escHTML(&b, r.Span)
		b.WriteString(`</td><td class="about">`)
		if r.Flag != "" {
			b.WriteString(`<span class="flag">[`)
			escHTML(&b, r.Flag)
			b.WriteString(`]</span> `)
		}
		if r.Error != "" {
			b.WriteString(`<span class="error">ERROR: `)
			escHTML(&b, r.Error)
			b.WriteString(`</span>`)
		} else {
			escHTML(&b, r.About)
		}
		if r.Since != "" {
			b.WriteString(` <span class="since">(`)
			escHTML(&b, r.Since)
			b.WriteString(`)</span>`)
		}
		if r.Tags != "" {
			b.WriteString(` <span class="tags">(could carry tagged fields `)
			escHTML(&b, r.Tags)
			b.WriteString(`)</span>`)
		}
		b.WriteString("</td></tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n</div>\n")
	return template.HTML(b.String())
}

// hexColumns are the grid's column headings (the template's hexcols).
var hexColumns = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"}

// escHTML writes s escaped as html/template escapes a string in text and
// in a quoted attribute: NUL becomes U+FFFD, and " & ' + < > entities.
func escHTML(b *strings.Builder, s string) {
	written := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		b.WriteString(s[written:i])
		b.WriteString(repl)
		written = i + 1
	}
	b.WriteString(s[written:])
}

// escURLPart writes s as html/template writes a value after "#" in a URL
// attribute: every byte but letters, digits and - . _ ~ percent-encoded.
func escURLPart(b *strings.Builder, s string) { processURL(b, s, false) }

// escURL writes s as html/template writes a whole URL attribute value: a
// URL with a scheme other than http, https or mailto is replaced by
// "#ZgotmplZ", and the rest is normalized (reserved characters and valid
// escapes kept).
func escURL(b *strings.Builder, s string) {
	if protocol, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(protocol, "/") {
		if !strings.EqualFold(protocol, "http") && !strings.EqualFold(protocol, "https") && !strings.EqualFold(protocol, "mailto") {
			s = "#ZgotmplZ"
		}
	}
	var u strings.Builder
	processURL(&u, s, true)
	escHTML(b, u.String())
}

// processURL is html/template's URL escaper (norm false) and normalizer
// (norm true).
func processURL(b *strings.Builder, s string, norm bool) {
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '!', '#', '$', '&', '*', '+', ',', '/', ':', ';', '=', '?', '@', '[', ']':
			if norm {
				continue
			}
		case '-', '.', '_', '~':
			continue
		case '%':
			if norm && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
				continue
			}
		default:
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				continue
			}
		}
		b.WriteString(s[written:i])
		fmt.Fprintf(b, "%%%02x", c)
		written = i + 1
	}
	b.WriteString(s[written:])
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// WriteEscaped writes s to b escaped as html/template escapes a string in
// text or in a quoted attribute value, for Go writers of pages that must
// give a template's bytes (package histsite's diff pages).
func WriteEscaped(b *strings.Builder, s string) { escHTML(b, s) }

// WriteEscapedURL writes s to b as html/template writes a whole URL
// attribute value (href="{{.}}"): filtered, normalized and escaped.
func WriteEscapedURL(b *strings.Builder, s string) { escURL(b, s) }
