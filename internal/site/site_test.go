package site

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/release"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
)

var spec43 = testshared.SpecPath("4.3")

var (
	once43  sync.Once
	site43  *Site
	reg43   *schema.Registry
	codec43 *codec.Codec
	err43   error
)

// built43 builds the whole 4.3 site once for all tests.
func built43(t *testing.T) *Site {
	t.Helper()
	testshared.Dir(t)
	once43.Do(func() {
		reg43, err43 = schema.Load(spec43)
		if err43 != nil {
			return
		}
		codec43 = codec.New(reg43)
		site43, err43 = Build(Options{Releases: []*release.Release{{Label: "4.3", Codec: codec43}}})
	})
	if err43 != nil {
		t.Fatal(err43)
	}
	return site43
}

func parse(t *testing.T, s *Site, path string) *html.Node {
	t.Helper()
	a, ok := s.Lookup(path)
	if !ok {
		t.Fatalf("no page at %s", path)
	}
	if a.ContentType != TypeHTML {
		t.Fatalf("%s has content type %s", path, a.ContentType)
	}
	doc, err := html.Parse(bytes.NewReader(a.Body))
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return doc
}

// ---- small DOM helpers over x/net/html ----

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// find returns every element under n (n included) for which match is true,
// in document order.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.ElementNode && match(x) {
			out = append(out, x)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func byID(n *html.Node, id string) *html.Node {
	l := find(n, func(x *html.Node) bool { return attr(x, "id") == id })
	if len(l) != 1 {
		return nil
	}
	return l[0]
}

func elems(n *html.Node, a atom.Atom, class string) []*html.Node {
	return find(n, func(x *html.Node) bool { return x.DataAtom == a && (class == "" || hasClass(x, class)) })
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// ---- tests ----

// alterConfigsV2 is the smallest AlterConfigs v2 request, encoded by
// franz-go's kmsg (an independent implementation): one resource with one
// config, empty strings, zero numbers, client id "" and correlation id 0.
func alterConfigsV2(t *testing.T) []byte {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = 2
	res := kmsg.NewAlterConfigsRequestResource()
	cfg := kmsg.NewAlterConfigsRequestResourceConfig()
	empty := ""
	cfg.Value = &empty
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("")).AppendRequest(nil, req, 0)
}

func TestAlterConfigsPageGrid(t *testing.T) {
	s := built43(t)
	doc := parse(t, s, "/apis/AlterConfigs/")
	req := byID(doc, "request")
	if req == nil {
		t.Fatal("no section#request")
	}
	cells := elems(req, atom.Td, "b")
	want := alterConfigsV2(t)
	if len(cells) != 25 || len(want) != 25 {
		t.Fatalf("request grid has %d cells, kmsg encodes %d bytes; want 25 each", len(cells), len(want))
	}
	// Categories by the wire layout of a flexible request (header v2):
	// size prefix, header fields, the header's tagged-field count, then the
	// body, whose three struct terminators (AlterableConfig,
	// AlterConfigsResource, the message) are tagged-field counts.
	wantCat := make([]string, 25)
	for i := range wantCat {
		switch {
		case i < 4:
			wantCat[i] = "c-frame"
		case i < 14:
			wantCat[i] = "c-hdr"
		case i == 14, i == 21, i == 22, i == 24:
			wantCat[i] = "c-tag"
		default:
			wantCat[i] = "c-req"
		}
	}
	for i, c := range cells {
		if got := text(c); got != fmt.Sprintf("%02x", want[i]) {
			t.Errorf("cell %d shows %q, kmsg has %02x", i, got, want[i])
		}
		if attr(c, "data-o") != fmt.Sprint(i) {
			t.Errorf("cell %d has data-o %q", i, attr(c, "data-o"))
		}
		if !hasClass(c, wantCat[i]) {
			t.Errorf("cell 0x%04x has classes %q, want %s", i, attr(c, "class"), wantCat[i])
		}
	}
	// Grid head: caption, 16 column heads 0-F, rows 0000 and 0010 with an
	// ASCII gutter.
	grid := elems(req, atom.Table, "grid")[0]
	if got := text(elems(grid, atom.Caption, "")[0]); got != "byte layout (25 bytes, 16 bytes per row)" {
		t.Errorf("grid caption %q", got)
	}
	var heads []string
	for _, th := range elems(elems(grid, atom.Thead, "")[0], atom.Th, "") {
		heads = append(heads, strings.TrimSpace(text(th)))
	}
	if got := strings.Join(heads, " "); got != "offset 0 1 2 3 4 5 6 7 8 9 A B C D E F ASCII" {
		t.Errorf("grid column heads %q", got)
	}
	var offs, gutters []string
	for _, th := range elems(elems(grid, atom.Tbody, "")[0], atom.Th, "off") {
		offs = append(offs, text(th))
	}
	for _, td := range elems(grid, atom.Td, "asc") {
		gutters = append(gutters, text(td))
	}
	if diff := cmp.Diff([]string{"0000", "0010"}, offs); diff != "" {
		t.Errorf("row offsets (-want +got):\n%s", diff)
	}
	// 0x21 is '!' (the api key 33), 0x02 etc. are not printable.
	if diff := cmp.Diff([]string{".....!..........", "........."}, gutters); diff != "" {
		t.Errorf("ASCII gutter (-want +got):\n%s", diff)
	}
	if got := attr(req, "data-hex"); got != hex.EncodeToString(want) {
		t.Errorf("section data-hex %s, want %x", got, want)
	}
}

// TestAlterConfigsResponseGrid checks the response grid against kmsg's
// body encoding behind a response header v1 (correlation id, empty tagged
// fields), framed by its size.
func TestAlterConfigsResponseGrid(t *testing.T) {
	s := built43(t)
	resp := kmsg.NewPtrAlterConfigsResponse()
	resp.Version = 2
	r := kmsg.NewAlterConfigsResponseResource()
	empty := ""
	r.ErrorMessage = &empty
	resp.Resources = append(resp.Resources, r)
	body := resp.AppendTo(nil)
	want := append([]byte{0, 0, 0, byte(5 + len(body)), 0, 0, 0, 0, 0}, body...)
	doc := parse(t, s, "/apis/AlterConfigs/")
	cells := elems(byID(doc, "response"), atom.Td, "b")
	var got []byte
	for _, c := range cells {
		b, err := hex.DecodeString(text(c))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if !bytes.Equal(got, want) || len(got) != 21 {
		t.Errorf("response grid %x\nkmsg          %x", got, want)
	}
	for i, c := range cells {
		want := "c-resp"
		switch {
		case i < 4:
			want = "c-frame"
		case i < 8:
			want = "c-hdr"
		case i == 8 || i == 19 || i == 20: // header, resource and message tagged-field counts
			want = "c-tag"
		}
		if !hasClass(c, want) {
			t.Errorf("response cell 0x%04x: classes %q, want %s", i, attr(c, "class"), want)
		}
	}
}

func TestAlterConfigsPageTree(t *testing.T) {
	s := built43(t)
	doc := parse(t, s, "/apis/AlterConfigs/")
	req := byID(doc, "request")
	rows := elems(elems(req, atom.Table, "tree")[0], atom.Tr, "")[1:] // skip the head row
	type row struct{ Name, Typ, Value, Span string }
	var got []row
	for _, r := range rows {
		var cells []string
		for c := r.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				cells = append(cells, text(c))
			}
		}
		got = append(got, row{cells[0], cells[1], cells[2], cells[3]})
	}
	// The seed page's object tree (shared/seeds/AlterConfigs.txt), name,
	// type, value and span columns.
	want := []row{
		{"AlterConfigsRequest", "message v2", "", "[0x0000, 25B]"},
		{"+-- Frame", "", "", "[0x0000, 4B]"},
		{"|   +-- size", "int32", "= 21", "[0x0000, 4B]"},
		{"+-- RequestHeader", "v2", "", "[0x0004, 11B]"},
		{"|   +-- request_api_key", "int16", "= 33 (AlterConfigs)", "[0x0004, 2B]"},
		{"|   +-- request_api_version", "int16", "= 2", "[0x0006, 2B]"},
		{"|   +-- correlation_id", "int32", "= 0", "[0x0008, 4B]"},
		{"|   +-- client_id", "nullable_string", `= "" (int16 len=0)`, "[0x000c, 2B]"},
		{"|   +-- tagged_fields", "uvarint", "= 0", "[0x000e, 1B]"},
		{"+-- AlterConfigsRequest", "struct", "", "[0x000f, 10B]"},
		{"+-- Resources", "[]AlterConfigsResource", "= 1 element", "[0x000f, 8B]"},
		{"|   +-- length", "uvarint", "= 2 (compact, n+1)", "[0x000f, 1B]"},
		{"|   +-- AlterConfigsResource[0]", "AlterConfigsResource", "= struct", "[0x0010, 7B]"},
		{"|       +-- ResourceType", "int8", "= 0", "[0x0010, 1B]"},
		{"|       +-- ResourceName", "string", `= "" (compact, len+1=1)`, "[0x0011, 1B]"},
		{"|       +-- Configs", "[]AlterableConfig", "= 1 element", "[0x0012, 4B]"},
		{"|       |   +-- length", "uvarint", "= 2 (compact, n+1)", "[0x0012, 1B]"},
		{"|       |   +-- AlterableConfig[0]", "AlterableConfig", "= struct", "[0x0013, 3B]"},
		{"|       |       +-- Name", "string", `= "" (compact, len+1=1)`, "[0x0013, 1B]"},
		{"|       |       +-- Value", "string", `= "" (compact, len+1=1)`, "[0x0014, 1B]"},
		{"|       |       +-- tagged_fields", "uvarint", "= 0", "[0x0015, 1B]"},
		{"|       +-- tagged_fields", "uvarint", "= 0", "[0x0016, 1B]"},
		{"+-- ValidateOnly", "bool", "= false", "[0x0017, 1B]"},
		{"+-- tagged_fields", "uvarint", "= 0", "[0x0018, 1B]"},
	}
	// The body rows sit under "+-- AlterConfigsRequest" in the seed, so
	// their prefixes carry four more spaces there.
	for i := 10; i < len(want); i++ {
		want[i].Name = "    " + want[i].Name
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request tree (-want +got):\n%s", diff)
	}
	// The byte cells point at their leaf rows: byte 0x10 at ResourceType,
	// whose parent is AlterConfigsResource[0].
	cell := find(req, func(n *html.Node) bool { return hasClass(n, "b") && attr(n, "data-o") == "16" })[0]
	leaf := rows[atoi(t, attr(cell, "data-r"))]
	if attr(leaf, "id") != "request:AlterConfigsRequest.Resources[0].ResourceType" {
		t.Errorf("byte 0x10 points at row %q", attr(leaf, "id"))
	}
	parent := rows[atoi(t, attr(leaf, "data-p"))]
	if n := strings.TrimSpace(text(parent.FirstChild)); !strings.HasSuffix(n, "AlterConfigsResource[0]") ||
		attr(parent, "data-o") != "16" || attr(parent, "data-n") != "7" {
		t.Errorf("parent of ResourceType is %q at %s+%s, want AlterConfigsResource[0] at 16+7", n, attr(parent, "data-o"), attr(parent, "data-n"))
	}
	// Without script, each row name links to its own fragment.
	for _, r := range rows {
		a := elems(r, atom.A, "")
		if len(a) != 1 {
			t.Fatalf("row %s: %d links", attr(r, "id"), len(a))
		}
		// html/template percent-encodes ':' and brackets; browsers decode
		// the fragment before matching ids.
		href, err := url.PathUnescape(attr(a[0], "href"))
		if err != nil || href != "#"+attr(r, "id") {
			t.Errorf("row %s: name links to %q", attr(r, "id"), attr(a[0], "href"))
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func TestAlterConfigsPageSchemaAndSummary(t *testing.T) {
	s := built43(t)
	doc := parse(t, s, "/apis/AlterConfigs/")
	if got := text(elems(doc, atom.H1, "")[0]); got != "AlterConfigs" {
		t.Errorf("h1 %q", got)
	}
	// The schema is the spec file from its opening brace, comments kept,
	// as text (highlighting only adds elements).
	src, err := os.ReadFile(filepath.Join(spec43, "AlterConfigsRequest.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantSchema := string(src[bytes.IndexByte(src, '{'):])
	pre := elems(byID(doc, "request"), atom.Pre, "schema")
	if len(pre) != 1 {
		t.Fatalf("%d schema blocks in the request section", len(pre))
	}
	if got := text(pre[0]); strings.TrimRight(got, "\n") != strings.TrimRight(wantSchema, "\n") {
		t.Errorf("schema text differs from the spec file:\n%s", cmp.Diff(wantSchema, got))
	}
	comments := elems(pre[0], atom.Span, "c1")
	firstComment := wantSchema[strings.Index(wantSchema, "//"):]
	firstComment = firstComment[:strings.IndexByte(firstComment, '\n')]
	if len(comments) != 2 || text(comments[0]) != firstComment {
		t.Errorf("schema comments highlighted: %d, want the 2 comment lines", len(comments))
	}
	// Summary, as in the seed.
	var summary []string
	for _, d := range elems(doc, atom.Div, "") {
		if d.Parent != nil && hasClass(d.Parent, "summary") {
			summary = append(summary, text(d))
		}
	}
	wantSummary := []string{"API key33", "Encoded atv2", "Flexible versions2+", "Headersreq v2, resp v1",
		"Request versions0-2", "Response versions0-2", "Request size25 bytes", "Response size21 bytes"}
	if diff := cmp.Diff(wantSummary, summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	var legend []string
	for _, li := range elems(elems(doc, atom.Ul, "legend")[0], atom.Li, "") {
		legend = append(legend, text(li))
	}
	if diff := cmp.Diff([]string{"frame", "rpc header", "request body", "RecordBatch", "Record", "response body", "tagged_fields"}, legend); diff != "" {
		t.Errorf("legend (-want +got):\n%s", diff)
	}
	titles := elems(doc, atom.P, "title")
	if len(titles) != 2 || text(titles[0]) != "AlterConfigsRequest v2, request header v2, 25 bytes on the wire" ||
		text(titles[1]) != "AlterConfigsResponse v2, response header v1, 21 bytes on the wire" {
		t.Errorf("section titles: %v", titles)
	}
	// The version switcher links every valid version and marks v2 as the
	// first flexible one.
	var versions []string
	for _, li := range elems(elems(doc, atom.Nav, "versions")[0], atom.Li, "") {
		a := elems(li, atom.A, "")[0]
		versions = append(versions, fmt.Sprintf("%s %s %s %v", text(a), attr(a, "href"), attr(li, "class"), attr(a, "aria-current")))
	}
	wantVersions := []string{
		"v0 /apis/AlterConfigs/v0/ classic ",
		"v1 /apis/AlterConfigs/v1/ classic ",
		"v2 /apis/AlterConfigs/v2/ flex first-flex page",
	}
	if diff := cmp.Diff(wantVersions, versions); diff != "" {
		t.Errorf("version switcher (-want +got):\n%s", diff)
	}
	// Brand header with the "All Kafka APIs" link.
	header := elems(doc, atom.Header, "brand")
	if len(header) != 1 || !strings.Contains(text(header[0]), "manifester") ||
		len(find(header[0], func(n *html.Node) bool {
			return n.DataAtom == atom.A && attr(n, "href") == "/" && text(n) == "All Kafka APIs"
		})) != 1 {
		t.Errorf("brand header missing or without the All Kafka APIs link")
	}
}

func TestHighestVersionPageIsTheTopVersion(t *testing.T) {
	s := built43(t)
	for _, api := range []string{"AlterConfigs", "Fetch", "Produce"} {
		top, _ := s.Lookup("/apis/" + api + "/")
		a, _ := reg43.APIByName(api)
		v, ok := s.Lookup(fmt.Sprintf("/apis/%s/v%d/", api, a.Request.Valid.Hi))
		if top == nil || !ok || !bytes.Equal(top.Body, v.Body) {
			t.Errorf("%s: /apis/%s/ is not the page of v%d", api, api, a.Request.Valid.Hi)
		}
	}
}

func TestIndexListsEveryKey(t *testing.T) {
	s := built43(t)
	doc := parse(t, s, "/")
	table := byID(doc, "apis")
	if table == nil {
		t.Fatal("no table#apis")
	}
	rows := elems(elems(table, atom.Tbody, "")[0], atom.Tr, "")
	if len(rows) != len(reg43.APIs) {
		t.Fatalf("index has %d rows, the 4.3 spec %d API keys", len(rows), len(reg43.APIs))
	}
	for i, api := range reg43.APIs {
		r := rows[i]
		cells := elems(r, atom.Td, "")
		if got := text(cells[0]); got != fmt.Sprint(api.Key) {
			t.Errorf("row %d key %q, want %d", i, got, api.Key)
		}
		name := text(cells[1])
		if !strings.HasPrefix(name, api.Name) {
			t.Errorf("row %d name %q, want %s", i, name, api.Name)
		}
		links := elems(cells[1], atom.A, "")
		if api.Reserved() {
			if !hasClass(r, "reserved") || len(elems(cells[1], atom.Span, "reserved")) != 1 {
				t.Errorf("%s is reserved but its row is not shown as reserved", api.Name)
			}
		}
		if len(links) != 1 || attr(links[0], "href") != "/apis/"+api.Name+"/" {
			t.Errorf("%s: link %v", api.Name, links)
		}
		if _, ok := s.Lookup("/apis/" + api.Name + "/"); !ok {
			t.Errorf("%s: the linked page does not exist", api.Name)
		}
		if api.Reserved() {
			if text(cells[2]) != "none" || text(cells[3]) != "-" {
				t.Errorf("reserved %s: versions %q flexible %q", api.Name, text(cells[2]), text(cells[3]))
			}
			continue
		}
		if api.Name == "AlterConfigs" && (text(cells[5]) != "25" || text(cells[6]) != "21") {
			t.Errorf("AlterConfigs sizes at v2: %s and %s, want 25 and 21 (the seed's)", text(cells[5]), text(cells[6]))
		}
		if text(cells[2]) != api.Request.Valid.String() || text(cells[3]) != api.Request.Flexible.String() {
			t.Errorf("%s: versions %q flexible %q", api.Name, text(cells[2]), text(cells[3]))
		}
	}
	// One row per *Request.json file of the spec directory.
	n := 0
	files, err := os.ReadDir(spec43)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name(), "Request.json") {
			n++
		}
	}
	if n != len(rows) {
		t.Errorf("%d *Request.json files in the spec, %d index rows", n, len(rows))
	}
	// 4.3 reserves LeaderAndIsr, StopReplica, UpdateMetadata and
	// ControlledShutdown (keys 4-7).
	var reserved []string
	for _, r := range rows {
		if hasClass(r, "reserved") {
			reserved = append(reserved, text(elems(r, atom.Td, "")[0]))
		}
	}
	if diff := cmp.Diff([]string{"4", "5", "6", "7"}, reserved); diff != "" {
		t.Errorf("reserved rows (-want +got):\n%s", diff)
	}
}

func TestEveryVersionHasPages(t *testing.T) {
	s := built43(t)
	for _, api := range reg43.APIs {
		if api.Reserved() {
			doc := parse(t, s, "/apis/"+api.Name+"/")
			if h1 := text(elems(doc, atom.H1, "")[0]); h1 != api.Name+" reserved" {
				t.Errorf("reserved %s: page heading %q", api.Name, h1)
			}
			for _, p := range s.Paths() {
				if strings.HasPrefix(p, "/apis/"+api.Name+"/v") {
					t.Errorf("reserved %s has a version page %s", api.Name, p)
				}
			}
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			for _, p := range []string{htmlr.APIPath(api.Name, int(v)), htmlr.JSONPath(api.Name, int(v))} {
				if _, ok := s.Lookup(p); !ok {
					t.Errorf("missing %s", p)
				}
			}
		}
	}
}

func TestPageJSONAndVectors(t *testing.T) {
	s := built43(t)
	a, ok := s.Lookup("/apis/AlterConfigs/v1.json")
	if !ok {
		t.Fatal("no /apis/AlterConfigs/v1.json")
	}
	var p struct {
		API     string `json:"api"`
		Version int    `json:"version"`
		Request struct {
			Hex  string `json:"hex"`
			Size int    `json:"size"`
		} `json:"request"`
	}
	if err := json.Unmarshal(a.Body, &p); err != nil {
		t.Fatal(err)
	}
	if p.API != "AlterConfigs" || p.Version != 1 {
		t.Errorf("v1.json is %s v%d", p.API, p.Version)
	}
	// Vectors: the same lines as package vectors writes.
	vs, err := vectors.Generate(codec43)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := vectors.Write(&buf, vs); err != nil {
		t.Fatal(err)
	}
	va, ok := s.Lookup("/vectors.jsonl")
	if !ok || !bytes.Equal(va.Body, buf.Bytes()) {
		t.Errorf("/vectors.jsonl differs from vectors.Write")
	}
	found := false
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, `"name":"AlterConfigs","version":1,"kind":"request"`) {
			found = strings.Contains(line, `"hex":"`+p.Request.Hex+`"`)
		}
	}
	if !found {
		t.Errorf("the v1 request hex of the page JSON is not the vector's")
	}
}

func TestAssetsCompressedAndTagged(t *testing.T) {
	s := built43(t)
	tags := map[string]string{}
	for _, p := range s.Paths() {
		a, _ := s.Lookup(p)
		if a.ETag == "" || len(a.HETag) != 1 {
			t.Fatalf("%s has no ETag", p)
		}
		if prev, dup := tags[a.ETag]; dup && !bytesEqual(s, prev, p) {
			t.Errorf("%s and %s share an ETag but not their bytes", prev, p)
		}
		tags[a.ETag] = p
		if a.Gzip == nil {
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(a.Gzip))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(b, a.Body) {
			t.Errorf("%s: gzip does not inflate to the body (%v)", p, err)
		}
		if a.GzipETag == a.ETag {
			t.Errorf("%s: gzip and identity share an ETag", p)
		}
	}
	st := s.Stats
	if st.Pages < 300 || st.Files != len(s.Paths()) || st.LargestGzip == 0 || st.GzipBytes >= st.Bytes {
		t.Errorf("implausible stats %+v", st)
	}
}

func bytesEqual(s *Site, p, q string) bool {
	a, _ := s.Lookup(p)
	b, _ := s.Lookup(q)
	return bytes.Equal(a.Body, b.Body)
}

func TestNoExternalReferences(t *testing.T) {
	s := built43(t)
	for _, p := range []string{"/", "/apis/AlterConfigs/", "/apis/Produce/v3/", "/apis/Fetch/", "/apis/LeaderAndIsr/", NotFoundPath} {
		doc := parse(t, s, p)
		ids := map[string]bool{}
		for _, n := range find(doc, func(*html.Node) bool { return true }) {
			if id := attr(n, "id"); id != "" {
				if ids[id] {
					t.Errorf("%s: duplicate id %q", p, id)
				}
				ids[id] = true
			}
			for _, a := range n.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: <%s %s=...> would be blocked by the CSP", p, n.Data, a.Key)
				}
				if n.DataAtom == atom.A && a.Key == "href" && htmlr.IsReferenceLink(a.Val) {
					continue // a KIP or Jira number in a schema comment
				}
				if a.Key == "href" || a.Key == "src" || a.Key == "action" {
					if !strings.HasPrefix(a.Val, "/") && !strings.HasPrefix(a.Val, "#") || strings.HasPrefix(a.Val, "//") {
						t.Errorf("%s: %s=%q leaves the origin", p, a.Key, a.Val)
					}
				}
			}
			if n.DataAtom == atom.Style {
				t.Errorf("%s: inline <style>", p)
			}
			if n.DataAtom == atom.Script && attr(n, "src") == "" {
				t.Errorf("%s: inline <script>", p)
			}
		}
	}
}

func TestFilePathRoundTrip(t *testing.T) {
	for _, p := range []string{"/", "/apis/Fetch/", "/apis/Fetch/v3/", "/apis/Fetch/v3.json", "/vectors.jsonl", "/static/site.css", "/404.html"} {
		if got := URLPath(FilePath(p)); got != p {
			t.Errorf("URLPath(FilePath(%q)) = %q", p, got)
		}
	}
}

func TestExtensions(t *testing.T) {
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	var calls sync.Map
	ext := Extension{
		Name: "test",
		Nav:  []htmlr.Link{{Href: "/releases/", Text: "Releases"}},
		Page: func(pc *PageContext) (htmlr.Extras, error) {
			calls.Store(fmt.Sprintf("%s/%d", pc.API.Name, pc.Version), len(pc.Releases))
			return htmlr.Extras{
				Summary:  []page.Item{{Label: "Accepted by", Value: "<4.3>"}},
				Sections: []htmlr.Section{{ID: "changes", Title: "Changes", Body: "<p>changed</p>"}},
			}, nil
		},
		Routes: func(b *Builder) error {
			if len(b.Releases()) != 2 {
				return fmt.Errorf("%d releases", len(b.Releases()))
			}
			return b.AddDoc("/releases/", "Releases", "<p>release list</p>")
		},
	}
	s, err := Build(Options{Releases: []*release.Release{{Label: "old", Codec: c}, {Label: "4.3", Codec: c}}, Extensions: []Extension{ext}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := calls.Load("AlterConfigs/0"); !ok || v != 2 {
		t.Errorf("extension page hook: %v %v", v, ok)
	}
	doc := parse(t, s, "/apis/AlterConfigs/v0/")
	sec := byID(doc, "changes")
	if sec == nil || text(elems(sec, atom.H2, "")[0]) != "Changes" || text(elems(sec, atom.P, "")[0]) != "changed" {
		t.Errorf("extension section missing")
	}
	if !strings.Contains(text(elems(doc, atom.Dl, "summary")[0]), "Accepted by<4.3>") {
		t.Errorf("extension summary item missing (or not escaped as text)")
	}
	rel := parse(t, s, "/releases/")
	if !strings.Contains(text(rel), "release list") ||
		len(find(rel, func(n *html.Node) bool { return attr(n, "href") == "/releases/" && text(n) == "Releases" })) != 1 {
		t.Errorf("extension route or nav link missing")
	}
	if _, err := Build(Options{Releases: []*release.Release{{Label: "4.3", Codec: c}}, Extensions: []Extension{{Name: "dup",
		Routes: func(b *Builder) error { return b.Add("/", TypeHTML, nil) }}}}); err == nil {
		t.Errorf("an extension replacing / did not fail the build")
	}
}

// BenchmarkBuild43 builds the whole 4.3 site (pages, JSON, vectors, gzip).
func BenchmarkBuild43(b *testing.B) {
	reg, err := schema.Load(testshared.Spec(b, "4.3"))
	if err != nil {
		b.Fatal(err)
	}
	c := codec.New(reg)
	for b.Loop() {
		if _, err := Build(Options{Releases: []*release.Release{{Label: "4.3", Codec: c}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTaggedFieldsListed checks that the Fetch v18 request lists the tagged
// fields of its top-level struct (ClusterId, tag 0, since v12; ReplicaState,
// tag 1, since v15) in the tagged-field table and on the struct's
// tagged_fields row of the tree, and that a non-flexible version says it
// has none.
func TestTaggedFieldsListed(t *testing.T) {
	s := built43(t)
	doc := parse(t, s, "/apis/Fetch/v18/")
	req := byID(doc, "request")
	var rows []string
	for _, tr := range elems(elems(req, atom.Table, "tagged")[0], atom.Tr, "") {
		var cells []string
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				cells = append(cells, text(c))
			}
		}
		rows = append(rows, strings.Join(cells[:min(len(cells), 5)], "|"))
	}
	for _, want := range []string{"FetchRequest|0|ClusterId|string|12+", "1|ReplicaState|ReplicaState|15+"} {
		found := false
		for _, r := range rows {
			found = found || strings.HasPrefix(r+"|", want+"|")
		}
		if !found {
			t.Errorf("tagged-field table lacks %q; rows %q", want, rows)
		}
	}
	row := byID(doc, "request:FetchRequest.tagged_fields")
	if row == nil {
		t.Fatal("no row request:FetchRequest.tagged_fields")
	}
	if got := text(elems(row, atom.Span, "tags")[0]); got != "(could carry tagged fields 0 ClusterId, 1 ReplicaState)" {
		t.Errorf("FetchRequest tagged_fields row notes %q", got)
	}
	v4 := parse(t, s, "/apis/Fetch/v4/")
	if p := elems(byID(v4, "request"), atom.P, "tagged-none"); len(p) != 1 || !strings.Contains(text(p[0]), "not a flexible version") {
		t.Errorf("Fetch v4 does not say it has no tagged fields")
	}
}
