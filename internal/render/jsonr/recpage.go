package jsonr

import (
	"strconv"

	"github.com/manifester/manifester/internal/recpage"
)

// RecordPageDocument returns the page document of an internal record type
// at a version, as `manifester show --format json RECORD` prints it and
// the site serves it: indented by two spaces, newline-terminated, its tree
// written from p.Spans, descriptions included.
func RecordPageDocument(p *recpage.Page) ([]byte, error) {
	return indent(AppendRecordPage(nil, p))
}

// AppendRecordPage appends the page document of p, compact, to dst.
func AppendRecordPage(dst []byte, p *recpage.Page) []byte {
	if p == nil {
		return append(dst, "null"...)
	}
	b := appendString(append(dst, `{"release":`...), p.Release)
	b = appendString(append(b, `,"module":`...), p.Module)
	if p.Topic != "" {
		b = appendString(append(b, `,"topic":`...), p.Topic)
	}
	b = appendString(append(b, `,"name":`...), p.Name)
	b = appendString(append(b, `,"type":`...), p.Type)
	b = strconv.AppendInt(append(b, `,"api_key":`...), int64(p.APIKey), 10)
	b = strconv.AppendInt(append(b, `,"version":`...), int64(p.Version), 10)
	b = appendString(append(b, `,"versions":`...), p.Versions)
	b = appendString(append(b, `,"flexible_versions":`...), p.Flexible)
	b = appendItems(append(b, `,"summary":`...), p.Summary)
	b = appendString(append(b, `,"part":`...), p.Part)
	b = appendString(append(b, `,"title":`...), p.Title)
	b = strconv.AppendInt(append(b, `,"size":`...), int64(p.Size), 10)
	b = appendString(append(b, `,"hex":`...), p.Hex)
	b = AppendTree(append(b, `,"tree":`...), p.Spans, Options{About: true})
	b = appendString(append(b, `,"schema":`...), p.Schema)
	return append(b, '}')
}
