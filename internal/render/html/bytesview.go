package html

import (
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
	return template.HTML(appendBytesHTML(make([]byte, 0, bytesHTMLSize(sv)), sv))
}

// bytesHTMLSize is about the size of a section's bytesHTML.
func bytesHTMLSize(sv *sectionView) int { return 256 + len(sv.Grid)*16*48 + len(sv.Tree)*400 }

// appendBytesHTML appends bytesHTML(sv) to b.
func appendBytesHTML(b []byte, sv *sectionView) []byte {
	if sv.Error != "" {
		b = append(b, `<p class="error" role="alert">`...)
		b = appendEscHTML(b, sv.Error)
		b = append(b, `</p>`...)
	}
	b = append(b, "\n<div class=\"bytes-pane\">\n<div class=\"tools\" hidden><button type=\"button\" data-copy=\"frame\">copy hex</button> <button type=\"button\" data-copy=\"field\" disabled>copy field hex</button> <output class=\"sel\" aria-live=\"polite\">Point at a byte or a tree row; click to pin.</output></div>\n<div class=\"gridwrap\">\n<table class=\"grid\" aria-label=\"byte layout of the "...)
	b = appendEscHTML(b, sv.Kind)
	b = append(b, "\">\n<caption>byte layout ("...)
	b = strconv.AppendInt(b, int64(sv.Size), 10)
	b = append(b, " bytes, 16 bytes per row)</caption>\n<thead><tr><th scope=\"col\" class=\"off\"><span class=\"vh\">offset</span></th>"...)
	for _, h := range hexColumns {
		b = append(b, `<th scope="col">`...)
		b = append(b, h...)
		b = append(b, `</th>`...)
	}
	b = append(b, "<th scope=\"col\" class=\"asc\">ASCII</th></tr></thead>\n<tbody>\n"...)
	for i := range sv.Grid {
		g := &sv.Grid[i]
		b = append(b, `<tr><th scope="row" class="off">`...)
		b = appendEscHTML(b, g.Off)
		b = append(b, `</th>`...)
		for j := range g.Cells {
			c := &g.Cells[j]
			b = append(b, `<td class="b `...)
			b = appendEscHTML(b, c.Class)
			b = append(b, `" data-o="`...)
			b = strconv.AppendInt(b, int64(c.Off), 10)
			b = append(b, `" data-r="`...)
			b = strconv.AppendInt(b, int64(c.R), 10)
			if c.First {
				b = append(b, `" tabindex="0">`...)
			} else {
				b = append(b, `" tabindex="-1">`...)
			}
			b = appendEscHTML(b, c.Hex)
			b = append(b, `</td>`...)
		}
		for range g.Pad {
			b = append(b, `<td class="pad"></td>`...)
		}
		b = append(b, `<td class="asc">`...)
		b = appendEscHTML(b, g.ASCII)
		b = append(b, "</td></tr>\n"...)
	}
	b = append(b, "</tbody>\n</table>\n</div>\n</div>\n<details class=\"hex\"><summary>hex</summary><code>"...)
	b = appendEscHTML(b, sv.Hex)
	b = append(b, "</code></details>\n<h3>object tree</h3>\n<div class=\"treewrap\">\n<table class=\"tree\">\n<thead><tr><th scope=\"col\">field</th><th scope=\"col\">type</th><th scope=\"col\">value</th><th scope=\"col\">[offset, size]</th><th scope=\"col\">description</th></tr></thead>\n<tbody>\n"...)
	for i := range sv.Tree {
		r := &sv.Tree[i]
		b = append(b, `<tr id="`...)
		b = appendEscHTML(b, r.ID)
		b = append(b, `" class="`...)
		b = appendEscHTML(b, r.Class)
		if r.Leaf {
			b = append(b, ` leaf`...)
		}
		if r.Error != "" {
			b = append(b, ` err`...)
		}
		b = append(b, `" data-i="`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `" data-o="`...)
		b = strconv.AppendInt(b, int64(r.Off), 10)
		b = append(b, `" data-n="`...)
		b = strconv.AppendInt(b, int64(r.Size), 10)
		b = append(b, `" data-p="`...)
		b = strconv.AppendInt(b, int64(r.Parent), 10)
		b = append(b, `"><th scope="row"><span class="pfx" aria-hidden="true">`...)
		b = appendEscHTML(b, r.Prefix)
		b = append(b, `</span><a href="#`...)
		b = appendURLPart(b, r.ID)
		b = append(b, `">`...)
		b = appendEscHTML(b, r.Name)
		b = append(b, `</a></th><td class="ty">`...)
		b = appendEscHTML(b, r.Type)
		b = append(b, `</td><td class="val">`...)
		if r.ErrHref != "" {
			b = append(b, `<a href="`...)
			b = appendURL(b, r.ErrHref)
			b = append(b, `">`...)
			b = appendEscHTML(b, r.Value)
			b = append(b, `</a>`...)
		} else {
			b = appendEscHTML(b, r.Value)
		}
		b = append(b, `</td><td class="span">`...)
		b = appendEscHTML(b, r.Span)
		b = append(b, `</td><td class="about">`...)
		if r.Flag != "" {
			b = append(b, `<span class="flag">[`...)
			b = appendEscHTML(b, r.Flag)
			b = append(b, `]</span> `...)
		}
		if r.Error != "" {
			b = append(b, `<span class="error">ERROR: `...)
			b = appendEscHTML(b, r.Error)
			b = append(b, `</span>`...)
		} else {
			b = appendEscHTML(b, r.About)
		}
		if r.Since != "" {
			b = append(b, ` <span class="since">(`...)
			b = appendEscHTML(b, r.Since)
			b = append(b, `)</span>`...)
		}
		if r.Tags != "" {
			b = append(b, ` <span class="tags">(could carry tagged fields `...)
			b = appendEscHTML(b, r.Tags)
			b = append(b, `)</span>`...)
		}
		b = append(b, "</td></tr>\n"...)
	}
	b = append(b, "</tbody>\n</table>\n</div>\n"...)
	return b
}

// hexColumns are the grid's column headings (the template's hexcols).
var hexColumns = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"}

// escHTML writes s escaped as html/template escapes a string in text and
// in a quoted attribute: NUL becomes U+FFFD, and " & ' + < > entities.
func escHTML(b *strings.Builder, s string) {
	if !needsEscHTML(s) {
		b.WriteString(s)
		return
	}
	b.Write(appendEscHTML(make([]byte, 0, len(s)+16), s))
}

// needsEscHTML reports whether escHTML changes s.
func needsEscHTML(s string) bool {
	for i := 0; i < len(s); i++ {
		if htmlEsc[s[i]] != "" {
			return true
		}
	}
	return false
}

// htmlEsc is the replacement of each byte html/template's text and
// attribute escapers replace.
var htmlEsc = [256]string{0: "\uFFFD", '"': "&#34;", '&': "&amp;", '\'': "&#39;", '+': "&#43;", '<': "&lt;", '>': "&gt;"}

// appendEscHTML appends s to b escaped as escHTML writes it.
func appendEscHTML(b []byte, s string) []byte {
	written := 0
	for i := 0; i < len(s); i++ {
		repl := htmlEsc[s[i]]
		if repl == "" {
			continue
		}
		b = append(b, s[written:i]...)
		b = append(b, repl...)
		written = i + 1
	}
	return append(b, s[written:]...)
}

// appendURLPart appends s to b as html/template writes a value after "#"
// in a URL attribute: every byte but letters, digits and - . _ ~
// percent-encoded.
func appendURLPart(b []byte, s string) []byte { return appendProcessURL(b, s, false) }

// escURL writes s as html/template writes a whole URL attribute value: a
// URL with a scheme other than http, https or mailto is replaced by
// "#ZgotmplZ", and the rest is normalized (reserved characters and valid
// escapes kept).
func escURL(b *strings.Builder, s string) { b.Write(appendURL(nil, s)) }

// appendURL appends s to b as escURL writes it.
func appendURL(b []byte, s string) []byte {
	if protocol, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(protocol, "/") {
		if !strings.EqualFold(protocol, "http") && !strings.EqualFold(protocol, "https") && !strings.EqualFold(protocol, "mailto") {
			s = "#ZgotmplZ"
		}
	}
	for i := 0; i < len(s); i++ {
		if !urlKeeps(s, i, true) {
			return appendEscHTML(b, string(appendProcessURL(nil, s, true)))
		}
	}
	return appendEscHTML(b, s) // the common case: nothing to normalize
}

// urlKeeps reports whether html/template's URL escaper (norm false) or
// normalizer (norm true) keeps byte i of s as it is.
func urlKeeps(s string, i int, norm bool) bool {
	c := s[i]
	switch c {
	case '!', '#', '$', '&', '*', '+', ',', '/', ':', ';', '=', '?', '@', '[', ']':
		return norm
	case '-', '.', '_', '~':
		return true
	case '%':
		return norm && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2])
	}
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// appendProcessURL is html/template's URL escaper (norm false) and
// normalizer (norm true).
func appendProcessURL(b []byte, s string, norm bool) []byte {
	written := 0
	for i := 0; i < len(s); i++ {
		if urlKeeps(s, i, norm) {
			continue
		}
		c := s[i]
		b = append(b, s[written:i]...)
		b = append(b, '%', hexLower[c>>4], hexLower[c&15])
		written = i + 1
	}
	return append(b, s[written:]...)
}

const hexLower = "0123456789abcdef"

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
