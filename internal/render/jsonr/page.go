package jsonr

import (
	"io"
	"strconv"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/span"
)

// Page writes the page document of p, the JSON that `manifester show
// --format json` prints and the site serves beside each API page:
// indented by two spaces, newline-terminated, as encoding/json's Encoder
// with SetIndent("", "  ") writes it. Each section's tree is written from
// its span tree (page.Section.Spans), descriptions included.
func Page(w io.Writer, p *page.Page) error {
	b, err := PageDocument(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// PageDocument returns what [Page] writes.
func PageDocument(p *page.Page) ([]byte, error) {
	return indent(AppendPage(nil, p))
}

// indent indents a compact document as encoding/json's Encoder with
// SetIndent("", "  ") does, newline included.
func indent(compact []byte) ([]byte, error) {
	return append(appendIndent(make([]byte, 0, len(compact)*3/2), compact), '\n'), nil
}

// AppendPage appends the page document of p, compact, to dst.
func AppendPage(dst []byte, p *page.Page) []byte {
	if p == nil {
		return append(dst, "null"...)
	}
	b := appendString(append(dst, `{"release":`...), p.Release)
	b = appendString(append(b, `,"api":`...), p.API)
	b = strconv.AppendInt(append(b, `,"api_key":`...), int64(p.APIKey), 10)
	b = strconv.AppendInt(append(b, `,"version":`...), int64(p.Version), 10)
	b = strconv.AppendBool(append(b, `,"flexible":`...), p.Flexible)
	b = appendString(append(b, `,"flexible_versions":`...), p.FlexibleVersions)
	b = appendString(append(b, `,"request_versions":`...), p.RequestVersions)
	b = appendString(append(b, `,"response_versions":`...), p.ResponseVersions)
	b = strconv.AppendInt(append(b, `,"request_header_version":`...), int64(p.RequestHeaderVersion), 10)
	b = strconv.AppendInt(append(b, `,"response_header_version":`...), int64(p.ResponseHeaderVersion), 10)
	if p.RequestHeaderFromSpec {
		b = append(b, `,"request_header_from_spec":true`...)
	}
	if p.ResponseHeaderFromSpec {
		b = append(b, `,"response_header_from_spec":true`...)
	}
	b = append(b, `,"listeners":`...)
	if p.Listeners == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, l := range p.Listeners {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, l)
		}
		b = append(b, ']')
	}
	b = strconv.AppendBool(append(b, `,"latest_version_unstable":`...), p.LatestVersionUnstable)
	b = appendString(append(b, `,"intro":`...), p.Intro)
	b = appendItems(append(b, `,"summary":`...), p.Summary)
	b = appendSection(append(b, `,"request":`...), p.Request)
	b = appendSection(append(b, `,"response":`...), p.Response)
	return append(b, '}')
}

// appendItems appends summary items (null for nil).
func appendItems(b []byte, items []page.Item) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"label":`...), it.Label)
		b = append(appendString(append(b, `,"value":`...), it.Value), '}')
	}
	return append(b, ']')
}

func appendSection(b []byte, s *page.Section) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = appendString(append(b, `{"kind":`...), s.Kind)
	b = appendString(append(b, `,"message":`...), s.Message)
	b = appendString(append(b, `,"title":`...), s.Title)
	b = strconv.AppendInt(append(b, `,"header_version":`...), int64(s.HeaderVersion), 10)
	if s.HeaderFromSpec {
		b = append(b, `,"header_from_spec":true`...)
	}
	b = strconv.AppendInt(append(b, `,"size":`...), int64(s.Size), 10)
	b = appendString(append(b, `,"hex":`...), s.Hex)
	b = AppendTree(append(b, `,"tree":`...), s.Spans, Options{About: true})
	b = appendString(append(b, `,"schema":`...), s.Schema)
	if s.Error != "" {
		b = appendString(append(b, `,"error":`...), s.Error)
	}
	return append(b, '}')
}

// AppendTree appends the tree t as JSON nodes (null for a nil or empty
// tree), with no output budget.
func AppendTree(dst []byte, t *span.Tree, o Options) []byte {
	if t == nil || t.Root() == span.None {
		return append(dst, "null"...)
	}
	w := treeWriter{b: dst, about: o.About}
	w.tree(t, t.Root())
	return w.b
}
