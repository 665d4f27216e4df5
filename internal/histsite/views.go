package histsite

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/history"
	"github.com/manifester/manifester/internal/schema"
)

// changesView is the "changes" section of one API page.
type changesView struct {
	API     string
	Version int16
	Release string
	Lo, Hi  int16
	// Diff is the change from the previous version; nil at the lowest.
	Diff *diffView
	// Older names the versions below the lowest that older releases
	// accept ("v0-v2"), or "".
	Older string
	// NoLink leaves out the link to the full diff page, which the site
	// does not hold for versions only older releases define.
	NoLink bool
	// Picker is the compare form ([data.pickerHTML]), or "".
	Picker template.HTML
}

// diffView is one version diff, request then response.
type diffView struct {
	API      string
	From, To int16
	Messages []msgView
}

type msgView struct {
	Kind          string // "Request" or "Response"
	Message       string
	File          string
	Flexible      string
	FlexChanged   bool
	Header        string
	HeaderChanged bool
	Size          string
	SizeChanged   bool
	Structs       []structView
	Comments      []diff.Comment
}

type structView struct {
	Name    string
	Fields  []fieldView
	Changed []string
}

type fieldView struct {
	Class  string // chg-add or chg-del
	Mark   string // "+" or "−"
	Text   string
	Fields []fieldView
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func pair(a, b string) string {
	if a == b {
		return a + " (unchanged)"
	}
	return a + " → " + b
}

// diffOf converts a version diff for the templates.
func diffOf(vd *diff.VersionDiff) *diffView {
	dv := &diffView{API: vd.API, From: vd.From, To: vd.To}
	for i, md := range []*diff.MessageDiff{&vd.Request, &vd.Response} {
		mv := msgView{Kind: "Request", Message: md.Message, File: md.Message + ".json",
			Flexible: pair(yesNo(md.Flexible.From), yesNo(md.Flexible.To)), FlexChanged: md.Flexible.Changed(),
			Header:        pair(fmt.Sprint(md.HeaderVersion.From), fmt.Sprint(md.HeaderVersion.To)),
			HeaderChanged: md.HeaderVersion.Changed(),
			Size:          fmt.Sprintf("%d → %d bytes (%+d)", md.Size.From, md.Size.To, md.Size.Delta()),
			SizeChanged:   md.Size.Changed(), Comments: md.Comments}
		if !md.Size.Changed() {
			mv.Size = fmt.Sprintf("%d bytes (unchanged)", md.Size.From)
		}
		if i == 1 {
			mv.Kind = "Response"
		}
		for _, sd := range md.Structs {
			sv := structView{Name: md.Message}
			if sd.Path != "" {
				sv.Name = md.Message + "." + sd.Path + " (" + sd.Struct + ")"
			}
			for _, f := range sd.Removed {
				sv.Fields = append(sv.Fields, fieldOf("chg-del", "−", f, 0))
			}
			for _, f := range sd.Added {
				sv.Fields = append(sv.Fields, fieldOf("chg-add", "+", f, 0))
			}
			for _, fc := range sd.Changed {
				for _, c := range fc.Changes {
					s := fmt.Sprintf("%s: %s %s → %s", fc.Name, c.Property, c.From, c.To)
					if c.Detail != "" {
						s += " (" + c.Detail + ")"
					}
					sv.Changed = append(sv.Changed, s)
				}
			}
			mv.Structs = append(mv.Structs, sv)
		}
		dv.Messages = append(dv.Messages, mv)
	}
	return dv
}

// maxFieldDepth bounds the nested field lists of an added struct.
const maxFieldDepth = 16

func fieldOf(class, mark string, f diff.FieldInfo, depth int) fieldView {
	fv := fieldView{Class: class, Mark: mark, Text: f.Name + " " + f.Type + " (" + f.Attrs() + ")"}
	if depth < maxFieldDepth {
		for _, sub := range f.Fields {
			fv.Fields = append(fv.Fields, fieldOf("", "", sub, depth+1))
		}
	}
	return fv
}

// pickerView is the form that opens the diff of any two versions.
type pickerView struct {
	API string
	// Versions are the versions the form's lists offer; nil with Inputs.
	Versions []int16
	// Inputs makes the form take two version numbers from Lo to Hi
	// rather than list every version twice, for an API of more than
	// [AllPairsMax] versions: every page of the API shows the form.
	Inputs   bool
	Lo, Hi   int16
	From, To int16
}

// picker offers every valid version of api, preselecting v-1 -> v.
func picker(api *schema.API, v int16) *pickerView {
	valid := api.Request.Valid
	pv := &pickerView{API: api.Name, From: max(v-1, valid.Lo), To: v, Lo: valid.Lo, Hi: valid.Hi, Inputs: !allPairs(valid)}
	if pv.Inputs {
		if pv.From == pv.To {
			pv.To = pv.From + 1
		}
		return pv
	}
	for x := valid.Lo; x <= valid.Hi; x++ {
		pv.Versions = append(pv.Versions, x)
		if x == schema.MaxVersion {
			break
		}
	}
	if pv.From == pv.To && len(pv.Versions) > 1 {
		pv.To = pv.From + 1
	}
	return pv
}

// acceptedView is the "accepted by Kafka" section.
type acceptedView struct {
	API     string
	Version int16
	Single  bool
	Labels  []string
	Newest  string
	Release string // the release the page is built from
	Valid   schema.Versions
	Rows    []acceptedRow
	// Total, when set, is the number of versions of which Rows shows a
	// window: those near Version, the first and the last.
	Total int
}

type acceptedRow struct {
	Version   int16
	Current   bool
	Link      bool // the page's release defines the version (it has a page)
	ReqFirst  string
	ReqLast   string
	RespFirst string
	RespLast  string
	Unstable  string
	Gone      bool // no longer accepted by the newest release
	GapBefore bool // versions before this row are left out
}

func rowView(r history.VersionRow, v int16, link bool) acceptedRow {
	ar := acceptedRow{Version: r.Version, Current: r.Version == v, Link: link,
		ReqFirst: r.Request.First, ReqLast: r.Request.Last, RespFirst: r.Response.First, RespLast: r.Response.Last,
		Gone: !r.Request.Current}
	var un []string
	un = append(un, r.Request.Unstable...)
	for _, u := range r.Response.Unstable {
		if !contains(un, u) {
			un = append(un, u)
		}
	}
	ar.Unstable = strings.Join(un, ", ")
	return ar
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// diffPageView is /apis/<Name>/diff/v<A>..v<B>/.
type diffPageView struct {
	API      string
	Release  string
	From, To int16
	Diff     *diffView
	Picker   template.HTML // the compare form ([data.pickerHTML])
	Removed  string
}

// diffIndexView is /apis/<Name>/diff/.
type diffIndexView struct {
	API     string
	Release string
	Removed string
	Picker  *pickerView
	Pairs   int // the pairs the site holds
	// All reports that the site holds every pair (Count <= Max): the
	// index is the table of Versions × Versions in Rows. Otherwise it is
	// List, one item per version.
	All        bool
	Count, Max int
	Hi         int16 // the newest version
	Versions   []int16
	Rows       []pairRow
	List       []pairItem
}

// pairItem is one version in the list of an index of many versions: its
// page, its diff from the previous version and its diff to the newest.
type pairItem struct {
	V, From, Hi    int16 // From is V-1
	Prev, ToNewest bool
}

type pairRow struct {
	From  int16
	Cells []pairCell
}

type pairCell struct {
	From, To int16
	Link     bool
}

// releasesView is /releases/.
type releasesView struct {
	Labels  []string
	Newest  string
	Single  bool
	Vectors []vectorLink
	Diffs   []releaseDiffView
	Removed []removedView
}

type vectorLink struct {
	Label string
	Href  string // "" when the label cannot name a file
}

type removedView struct {
	Key         int16
	Name        string
	Href        string
	LastRelease string
	RemovedIn   string
	Reserved    bool
}

type releaseDiffView struct {
	ID       string
	From, To string
	Added    []apiRefView
	Removed  []apiRefView
	Changed  []apiChangeView
	Unstable []apiRefView
}

type apiRefView struct {
	Key      int16
	Name     string
	Href     string
	Versions string
	Reserved bool
}

type apiChangeView struct {
	Key       int16
	Name      string
	Href      string
	Notes     string
	Redefined []string
}
