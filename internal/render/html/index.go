package html

import (
	"io"
	"strconv"
	"strings"
)

// IndexInput is the data of the "All Kafka APIs" page.
type IndexInput struct {
	Release string
	Rows    []IndexRow
}

// IndexRow is one API key of the index.
type IndexRow struct {
	Key            int16
	Name           string
	Reserved       bool
	Versions       string // request valid versions ("0-2", "none")
	Flexible       string // flexible versions ("2+", "none")
	Listeners      []string
	ControllerOnly bool
	Unstable       bool  // latestVersionUnstable
	Highest        int16 // the highest valid version
	RequestSize    int   // bytes of the smallest request at Highest
	ResponseSize   int
	// Badges are added by extensions after the name (e.g. "removed in 4.0").
	Badges []Badge
}

type indexView struct {
	Release string
	Rows    []indexRowView
	Count   int
}

type indexRowView struct {
	IndexRow
	Href      string
	Listeners string
	Search    string // lower-case "key name" for the filter
	KeyText   string
}

// Index writes the "All Kafka APIs" page.
func (r *Renderer) Index(w io.Writer, in *IndexInput) error {
	v := &indexView{Release: clean(in.Release), Count: len(in.Rows)}
	for _, row := range in.Rows {
		row.Name = clean(row.Name)
		bs := make([]Badge, len(row.Badges))
		for i, b := range row.Badges {
			bs[i] = Badge{clean(b.Class), clean(b.Text), clean(b.Title)}
		}
		row.Badges = bs
		rv := indexRowView{IndexRow: row, KeyText: strconv.Itoa(int(row.Key)),
			Search: strings.ToLower(strconv.Itoa(int(row.Key)) + " " + row.Name)}
		rv.Href = APIPath(row.Name, -1)
		ls := make([]string, len(row.Listeners))
		for i, l := range row.Listeners {
			ls[i] = clean(l)
		}
		rv.Listeners = strings.Join(ls, ", ")
		v.Rows = append(v.Rows, rv)
	}
	title := "All Kafka APIs"
	if v.Release != "" {
		title += " (Kafka " + v.Release + ")"
	}
	return r.exec(w, "index", title, "index", v)
}

// ReservedInput is the page of a key that is only reserved.
type ReservedInput struct {
	Release string
	Key     int16
	Name    string
}

// Reserved writes the page of a reserved API key (validVersions "none").
func (r *Renderer) Reserved(w io.Writer, in *ReservedInput) error {
	v := &ReservedInput{Release: clean(in.Release), Key: in.Key, Name: clean(in.Name)}
	return r.exec(w, "reserved", v.Name, "api", v)
}
