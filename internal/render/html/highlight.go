package html

import (
	"html/template"
	"strings"
	"sync"
)

// Highlight returns the schema text (Kafka's commented JSON) as highlighted
// HTML: a <pre> whose tokens carry short CSS classes (nt object keys, s2
// strings, mi and mf numbers, kc true/false/null, c1 and cm comments, p
// punctuation, err anything else), styled by site.css.
//
// The text is split by a small JSON-with-comments tokenizer in one pass
// over the source: no regular expressions and no time limits, so the same
// text gives the same bytes on any machine at any load (a regexp-based
// highlighter with match deadlines degraded to error tokens under load).
// Every token is HTML-escaped; the text content of the result is the
// source, with invalid UTF-8 replaced by U+FFFD.
func Highlight(src string) template.HTML {
	src = strings.ToValidUTF8(src, "\uFFFD")
	// Line ends as an HTML parser reads them (CRLF and a lone CR are LF),
	// so that a CRLF split between two tokens is not read as two breaks.
	src = lineEnds.Replace(src)
	var b strings.Builder
	b.Grow(len(src) + len(src)/2)
	b.WriteString(`<pre class="schema chroma" tabindex="0"><code>`)
	for _, t := range tokenize(src) {
		text := src[t.start:t.end]
		if t.class == "" {
			template.HTMLEscape(&b, []byte(text))
			continue
		}
		b.WriteString(`<span class="`)
		b.WriteString(t.class)
		b.WriteString(`">`)
		if t.class == "c1" || t.class == "cm" {
			writeComment(&b, text)
		} else {
			template.HTMLEscape(&b, []byte(text))
		}
		b.WriteString(`</span>`)
	}
	b.WriteString(`</code></pre>`)
	return template.HTML(b.String())
}

// Where the spec comments' references lead: KIP-N to a search of Kafka's
// wiki for it (KIP pages have no address by number alone), KAFKA-N to its
// Jira issue.
const (
	kipURL  = "https://cwiki.apache.org/confluence/dosearchsite.action?where=KAFKA&queryString="
	jiraURL = "https://issues.apache.org/jira/browse/"
)

// IsReferenceLink reports whether href is one of the links to Kafka's
// KIPs and Jira issues that schema comments carry: the only links of the
// site that leave it (plain links a reader follows; the pages load
// nothing from another origin).
func IsReferenceLink(href string) bool {
	return strings.HasPrefix(href, kipURL) || strings.HasPrefix(href, jiraURL)
}

// writeComment writes a comment's text escaped, with every "KIP-N" and
// "KAFKA-N" in it a link (the text stays the same).
func writeComment(b *strings.Builder, text string) {
	for len(text) > 0 {
		i, n, url := nextReference(text)
		if i < 0 {
			template.HTMLEscape(b, []byte(text))
			return
		}
		template.HTMLEscape(b, []byte(text[:i]))
		ref := text[i : i+n]
		b.WriteString(`<a href="`)
		b.WriteString(url)
		b.WriteString(ref)
		b.WriteString(`">`)
		b.WriteString(ref)
		b.WriteString(`</a>`)
		text = text[i+n:]
	}
}

// nextReference finds the first "KIP-<digits>" or "KAFKA-<digits>" in s
// that does not continue a word: its index, length and link prefix, or -1.
func nextReference(s string) (int, int, string) {
	for i := 0; i < len(s); i++ {
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		for _, p := range [...]struct{ prefix, url string }{{"KIP-", kipURL}, {"KAFKA-", jiraURL}} {
			if !strings.HasPrefix(s[i:], p.prefix) {
				continue
			}
			j := i + len(p.prefix)
			for j < len(s) && j-i-len(p.prefix) < 7 && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j > i+len(p.prefix) && (j == len(s) || !isWordByte(s[j])) {
				return i, j - i, p.url
			}
		}
	}
	return -1, 0, ""
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

var lineEnds = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// token is a run of src with its CSS class ("" for whitespace).
type token struct {
	start, end int
	class      string
}

// tokenize splits JSON with // and /* */ comments into tokens. It accepts
// any text: what is not JSON becomes "err" tokens, one per run.
func tokenize(src string) []token {
	var out []token
	add := func(start, end int, class string) {
		// Adjacent punctuation and adjacent error characters merge into
		// one token, as in "]}," or a run of stray bytes.
		if n := len(out); n > 0 && (class == "p" || class == "err") && out[n-1].class == class && out[n-1].end == start {
			out[n-1].end = end
			return
		}
		out = append(out, token{start, end, class})
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j := i + 1
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
				j++
			}
			add(i, j, "")
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			add(i, i+j, "c1")
			i += j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			add(i, end, "cm")
			i = end
		case c == '"':
			j := stringEnd(src, i)
			class := "s2"
			if isKey(src, j) {
				class = "nt"
			}
			add(i, j, class)
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j, float := numberEnd(src, i)
			switch {
			case j == i+1 && c == '-':
				add(i, j, "err")
			case float:
				add(i, j, "mf")
			default:
				add(i, j, "mi")
			}
			i = j
		case c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':':
			add(i, i+1, "p")
			i++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(src) && (src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
				j++
			}
			switch src[i:j] {
			case "true", "false", "null":
				add(i, j, "kc")
			default:
				add(i, j, "err")
			}
			i = j
		default:
			j := i + 1
			for j < len(src) && src[j] >= 0x80 && src[j] < 0xC0 { // keep a UTF-8 sequence whole
				j++
			}
			add(i, j, "err")
			i = j
		}
	}
	return out
}

// stringEnd returns the offset after the string starting at src[i] (a
// quote): after the closing quote, or at the end of the line when the
// string is not closed.
func stringEnd(src string, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		case '\n':
			return j
		}
	}
	return len(src)
}

// isKey reports whether the next token after offset j, past whitespace,
// is a colon: the string before it is an object key.
func isKey(src string, j int) bool {
	for ; j < len(src); j++ {
		switch src[j] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// numberEnd scans a JSON number at src[i]: -?digits(.digits)?(e[+-]?digits)?
func numberEnd(src string, i int) (end int, float bool) {
	j := i
	if src[j] == '-' {
		j++
	}
	digits := func() {
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
	}
	digits()
	if j < len(src) && src[j] == '.' && j+1 < len(src) && src[j+1] >= '0' && src[j+1] <= '9' {
		j++
		digits()
		float = true
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && src[k] >= '0' && src[k] <= '9' {
			j = k
			digits()
			float = true
		}
	}
	return j, float
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
