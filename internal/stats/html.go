package stats

import (
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
)

// Bucket is one bar of a latency histogram: the latencies in [Lo, Hi) µs.
type Bucket struct {
	Lo, Hi int64
	Count  int
}

// Histogram sorts latencies into buckets bounded by 1-2-5 steps:
// [0, 1), [1, 2), [2, 5), [5, 10), [10, 20) ... µs, from the first bucket
// that holds one to the last.
func Histogram(latencies []int64) []Bucket {
	if len(latencies) == 0 {
		return nil
	}
	// bounds[k] is the lower bound of bucket k+1: 1, 2, 5, 10, 20, 50, ...
	var bounds []int64
	for d := int64(1); d > 0 && d <= math.MaxInt64/10; d *= 10 {
		bounds = append(bounds, d, 2*d, 5*d)
	}
	counts := make([]int, len(bounds)+1)
	lo, hi := len(counts), 0
	for _, l := range latencies {
		k := sort.Search(len(bounds), func(i int) bool { return bounds[i] > l })
		counts[k]++
		lo, hi = min(lo, k), max(hi, k)
	}
	var out []Bucket
	for k := lo; k <= hi; k++ {
		b := Bucket{Count: counts[k], Hi: math.MaxInt64}
		if k > 0 {
			b.Lo = bounds[k-1]
		}
		if k < len(bounds) {
			b.Hi = bounds[k]
		}
		out = append(out, b)
	}
	return out
}

// durationLabel prints microseconds as µs, ms or s ("500µs", "2ms"); the
// bucket bounds are round in one of them.
func durationLabel(us int64) string {
	switch {
	case us >= 1_000_000 && us%1_000_000 == 0:
		return strconv.FormatInt(us/1_000_000, 10) + "s"
	case us >= 1000 && us%1000 == 0:
		return strconv.FormatInt(us/1000, 10) + "ms"
	}
	return strconv.FormatInt(us, 10) + "µs"
}

type bar struct {
	X, Y, W, H int
	Label      string
	Count      int
	Title      string
}

type htmlAPI struct {
	*APIStats
	Label    string
	Errors   string
	Bars     []bar
	Width    int
	Height   int
	AxisY    int
	HasChart bool
}

const (
	barW    = 36
	chartH  = 120
	marginB = 34
)

func chart(a *APIStats) htmlAPI {
	h := htmlAPI{APIStats: a, Label: apiLabel(a), Errors: errorList(a.Errors, 10), Height: chartH + marginB, AxisY: chartH + 1}
	buckets := Histogram(a.Latencies)
	top := 1
	for _, b := range buckets {
		top = max(top, b.Count)
	}
	for i, b := range buckets {
		bh := b.Count * chartH / top
		if b.Count > 0 {
			bh = max(bh, 1)
		}
		h.Bars = append(h.Bars, bar{X: 4 + i*barW, Y: chartH - bh, W: barW - 6, H: bh, Label: durationLabel(b.Lo), Count: b.Count,
			Title: strconv.Itoa(b.Count) + " responses in [" + durationLabel(b.Lo) + ", " + durationLabel(b.Hi) + ")"})
	}
	h.Width = 8 + len(buckets)*barW
	h.HasChart = len(buckets) > 0
	return h
}

// page is self-contained: one inline style sheet, inline SVG, no scripts,
// nothing loaded from elsewhere; html/template escapes every value, and
// strings from the traffic (endpoints, client ids) are quoted as the text
// table quotes them when they hold invalid UTF-8, control or format
// characters (html/template passes those through: the page would not be
// the UTF-8 it says, and a bidi override would reverse what follows).
var page = template.Must(template.New("stats").Funcs(template.FuncMap{"safe": safe, "clientID": htmlClientID}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>manifester stats</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child,td.l,th.l{text-align:left}
section{margin:1.5em 0}
h2{font-size:1.1em;margin:.2em 0}
svg text{font-size:10px;fill:#444}
rect.bar{fill:#4a7bb7}
.none{color:#888}
</style>
</head>
<body>
<h1>Kafka traffic</h1>
<table>
<tr><th>API</th><th>version</th><th>requests</th><th>responses</th><th>unanswered</th><th>request bytes</th><th>response bytes</th><th>p50 µs</th><th>p99 µs</th><th>max µs</th><th class="l">errors</th></tr>
{{range .APIs}}<tr><td>{{.Label}}</td><td>v{{.Version}}</td><td>{{.Requests}}</td><td>{{.Responses}}</td><td>{{.Unanswered}}</td><td>{{.Bytes.Request}}</td><td>{{.Bytes.Response}}</td>{{if .Latency}}<td>{{.Latency.P50}}</td><td>{{.Latency.P99}}</td><td>{{.Latency.Max}}</td>{{else}}<td>-</td><td>-</td><td>-</td>{{end}}<td class="l">{{.Errors}}</td></tr>
{{end}}</table>
{{if .Unpaired}}<p>{{.Unpaired}} responses without their request (not captured): API and version unknown, not counted above.</p>{{end}}
<h1>Latency, request to response</h1>
<p>Responses per latency range: each bar counts the responses from its label up to the next one (1-2-5 steps). Percentiles are by nearest rank.</p>
{{range .APIs}}<section>
<h2>{{.Label}} v{{.Version}}</h2>
{{if .HasChart}}<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" role="img" aria-label="latency histogram of {{.Label}} v{{.Version}}">
<line x1="0" y1="{{.AxisY}}" x2="{{.Width}}" y2="{{.AxisY}}" stroke="#888"/>
{{range .Bars}}<g><title>{{.Title}}</title><rect class="bar" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"/><text x="{{.X}}" y="{{$.ChartLabelY}}">{{.Label}}</text><text x="{{.X}}" y="{{$.ChartCountY}}">{{.Count}}</text></g>
{{end}}</svg>{{else}}<p class="none">no paired responses</p>{{end}}
</section>
{{end}}
<h1>Connections</h1>
<table>
<tr><th>conn</th><th class="l">client</th><th class="l">server</th><th class="l">client id</th><th>frames</th></tr>
{{range .Connections}}<tr><td>{{.ID}}</td><td class="l">{{safe .Client}}</td><td class="l">{{safe .Server}}</td><td class="l">{{clientID .ClientID}}</td><td>{{.Frames}}</td></tr>
{{end}}</table>
{{with .Omitted}}<p>{{.}}</p>
{{end}}</body>
</html>
`))

// htmlClientID is a connection's client id as the page shows it: as is
// when it is printable, quoted otherwise (see safe), "-" when null.
func htmlClientID(id *string) string {
	if id == nil {
		return "-"
	}
	return safe(*id)
}

// WriteHTML writes one self-contained HTML page: the tables and, per API
// version, a latency histogram in inline SVG.
func (s *Summary) WriteHTML(w io.Writer) error {
	data := struct {
		APIs                     []htmlAPI
		Connections              []ConnStats
		Omitted                  string
		Unpaired                 int64
		ChartLabelY, ChartCountY int
	}{Connections: s.Connections, Unpaired: s.UnpairedResponses, ChartLabelY: chartH + 14, ChartCountY: chartH + 28}
	if s.Omitted != nil {
		data.Omitted = omittedLine(s.Omitted)
	}
	for i := range s.APIs {
		data.APIs = append(data.APIs, chart(&s.APIs[i]))
	}
	return page.Execute(w, data)
}
