package diff

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/schema"
)

// Comment is one of the spec's own per-version comments, such as
// "// Version 13 replaces topic names with topic IDs (KIP-516).". A comment
// that wraps over several "//" lines is one Comment.
type Comment struct {
	// Versions are the versions the comment is about: "Version 3" gives
	// 3-3, "Versions 0-3 were removed" gives 0-3.
	Versions schema.Versions `json:"-"`
	// Lo and Hi repeat Versions for JSON.
	Lo   int16  `json:"lo"`
	Hi   int16  `json:"hi"`
	Text string `json:"text"`
	// Line is the 1-based line of the comment's first line in the file.
	Line int `json:"line"`
}

// MaxCommentText bounds the text of the comments kept from one spec file
// (Kafka's files have at most 1.5 KB of them). Every diff of a message
// shows its comments about the versions between, and a message has a diff
// page for every pair of its versions, so the comments of a crafted file
// would be repeated thousands of times.
const MaxCommentText = 16 << 10

// commentStart matches the opening words of a per-version comment and
// captures the version it is about, and the end of a range ("Versions
// 0-3") or the rest of a list ("Versions 1 and 2", "Version 3, 4, and 5").
var commentStart = regexp.MustCompile(`^(?i:versions?|starting (?:in|from|with) versions?|from versions?|in versions?)\s+(\d+)(?:\s*(?:-|to|through)\s*(\d+)|((?:\s*(?:,\s*(?i:and|or)?|(?i:and|or))\s*\d+)+))?\b`)

// listVersion matches each version of a list's rest.
var listVersion = regexp.MustCompile(`\d+`)

// VersionComments returns the per-version comments of a spec file's
// source, in file order. The licence header (the comment block before the
// first JSON line) is skipped. A comment starts with a line such as
// "Version N ...", "Versions A-B ...", "Versions A and B ..." (a list,
// about its lowest to its highest version) or "Starting in version N
// ..."; the comment lines that follow it, up to a blank comment line, a
// code line or the next such start, continue it. Comment paragraphs that do not start
// that way ("Supported errors: ...") are not per-version and are left out.
// The comments hold at most [MaxCommentText] bytes of text: the one that
// passes it is cut and ends in " …", and those after it are left out.
func VersionComments(src []byte) []Comment {
	var out []Comment
	var cur *Comment
	var body strings.Builder // cur's text: appending to a string would copy it once per line
	budget := MaxCommentText
	// write adds s to cur's text; false when the budget ran out.
	write := func(s string) bool {
		if len(s) <= budget {
			body.WriteString(s)
			budget -= len(s)
			return true
		}
		cut := budget
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		body.WriteString(s[:cut])
		body.WriteString(" …")
		budget = 0
		return false
	}
	flush := func() {
		if cur != nil {
			cur.Text = body.String()
			out = append(out, *cur)
			cur = nil
		}
	}
	inHeader := true
	line := 0
	for len(src) > 0 {
		var raw []byte
		raw, src, _ = bytes.Cut(src, []byte("\n"))
		line++
		s := strings.TrimSpace(string(raw))
		text, isComment := strings.CutPrefix(s, "//")
		if inHeader {
			if s == "" || isComment {
				continue
			}
			inHeader = false
		}
		if !isComment {
			flush()
			continue
		}
		text = strings.TrimSpace(text)
		if text == "" {
			flush()
			continue
		}
		if m := commentStart.FindStringSubmatch(text); m != nil {
			flush()
			lo, errLo := strconv.ParseInt(m[1], 10, 16)
			hi := lo
			if m[2] != "" {
				h, err := strconv.ParseInt(m[2], 10, 16)
				if err == nil && h >= lo {
					hi = h
				}
			}
			// A list is about its lowest to its highest version.
			for _, n := range listVersion.FindAllString(m[3], -1) {
				if h, err := strconv.ParseInt(n, 10, 16); err == nil {
					lo, hi = min(lo, h), max(hi, h)
				}
			}
			if errLo != nil {
				continue
			}
			v := schema.Versions{Lo: int16(lo), Hi: int16(hi)}
			if budget == 0 {
				break
			}
			cur = &Comment{Versions: v, Lo: v.Lo, Hi: v.Hi, Line: line}
			body.Reset()
			if !write(text) {
				break
			}
			continue
		}
		if cur != nil && !write(" "+text) {
			break
		}
	}
	flush()
	return out
}

// commentsBetween returns those of a file's comments (from
// [VersionComments]) about any version in (a, b] (or (b, a] when a > b).
func commentsBetween(comments []Comment, a, b int16) []Comment {
	if a > b {
		a, b = b, a
	}
	span := schema.Versions{Lo: a + 1, Hi: b}
	var out []Comment
	for _, c := range comments {
		if !c.Versions.Intersect(span).Empty() {
			out = append(out, c)
		}
	}
	return out
}
