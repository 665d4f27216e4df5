package server_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
)

// row is a row of a published JSON tree ("tree" of a decode --format json
// line and of each frame of POST /api/decode).
type row struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Text     string `json:"text"`
	Offset   int    `json:"offset"`
	Size     int    `json:"size"`
	Flag     string `json:"flag"`
	Children []*row `json:"children"`
}

// flat lists the rows depth first, without their children.
func flat(r *row, out []row) []row {
	if r == nil {
		return out
	}
	c := *r
	c.Children = nil
	out = append(out, c)
	for _, k := range r.Children {
		out = flat(k, out)
	}
	return out
}

// TestServerShowsWhatCLIShows: for the same bytes, POST /api/decode and
// `manifester decode --format json` give the same tree: the same rows,
// values and notes (error names, API names, dates). Frames are encoded
// with kmsg.
func TestServerShowsWhatCLIShows(t *testing.T) {
	spec := testshared.Spec(t, "4.3")
	reg, err := schema.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	st, err := site.Build(site.Options{Releases: []*release.Release{{Label: "4.3", Codec: codec.New(reg)}}, DecodePage: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(st)
	server.RegisterDecode(srv, st)

	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	for _, k := range []int16{0, 1, 18} {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MaxVersion = k, 9
		av.ApiKeys = append(av.ApiKeys, ak)
	}
	lo := kmsg.NewPtrListOffsetsResponse()
	lo.Version = 7
	lt := kmsg.NewListOffsetsResponseTopic()
	lt.Topic = "orders"
	lp := kmsg.NewListOffsetsResponseTopicPartition()
	lp.ErrorCode, lp.Timestamp, lp.Offset = 6, 1_700_000_000_123, 42
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Version = 2
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = 2, "orders"
	ac.Resources = append(ac.Resources, res)
	vers := kmsg.NewPtrApiVersionsRequest()
	vers.Version = 3
	vers.ClientSoftwareName, vers.ClientSoftwareVersion = "kgo", "1.0"

	for _, tc := range []struct {
		name, api string
		version   int
		b         []byte
		notes     []string // values the tree must show
	}{
		{"ApiVersions v3 response", "ApiVersions", 3, testframes.Response(av, 1), []string{"= 0 (NONE)", "= 0 (Produce)", "= 18 (ApiVersions)"}},
		{"ListOffsets v7 response", "ListOffsets", 7, testframes.Response(lo, 2), []string{"= 6 (NOT_LEADER_OR_FOLLOWER)", "= 1700000000123 (2023-11-14T22:13:20.123Z)"}},
		{"AlterConfigs v2 request", "", 0, kmsg.NewRequestFormatter(kmsg.FormatterClientID("c")).AppendRequest(nil, ac, 3), []string{"= 33 (AlterConfigs)", `= "orders" (compact, len+1=7)`}},
		{"ApiVersions v3 request", "", 0, kmsg.NewRequestFormatter(kmsg.FormatterClientID("c")).AppendRequest(nil, vers, 4), []string{"= 18 (ApiVersions)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hex.EncodeToString(tc.b)
			req := map[string]any{"hex": h, "kind": "request"}
			args := []string{"decode", "--spec", spec, "--format", "json", "--hex", h}
			if tc.api != "" {
				req = map[string]any{"hex": h, "kind": "response", "api": tc.api, "version": tc.version}
				args = append(args, "--kind", "response", "--api", tc.api, "--version", strconv.Itoa(tc.version))
			}
			body, _ := json.Marshal(req)
			r := httptest.NewRequest("POST", "/api/decode", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			var answer struct {
				Frames []struct {
					Tree *row `json:"tree"`
				} `json:"frames"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || w.Code != 200 || len(answer.Frames) != 1 {
				t.Fatalf("server: %d %v %s", w.Code, err, w.Body.Bytes())
			}

			var out, errOut bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
			if code := cli.Main(env, args); code != 0 {
				t.Fatalf("cli: exit %d: %s", code, errOut.String())
			}
			var line struct {
				Tree *row `json:"tree"`
			}
			if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &line); err != nil {
				t.Fatalf("cli output: %v\n%s", err, out.String())
			}
			fromServer, fromCLI := flat(answer.Frames[0].Tree, nil), flat(line.Tree, nil)
			if len(fromCLI) < 5 {
				t.Fatalf("cli tree has %d rows", len(fromCLI))
			}
			if diff := cmp.Diff(fromCLI, fromServer); diff != "" {
				t.Errorf("trees differ (-cli +server):\n%s", diff)
			}
			// The CLI's text tree shows the same values, notes included.
			out.Reset()
			textArgs := append([]string{args[0], "-v"}, args[1:]...)
			for i, a := range textArgs {
				if a == "json" {
					textArgs[i] = "text"
				}
			}
			if code := cli.Main(env, textArgs); code != 0 {
				t.Fatalf("cli text: exit %d: %s", code, errOut.String())
			}
			for _, r := range fromServer {
				if r.Text != "" && !strings.Contains(out.String(), " "+r.Text) {
					t.Errorf("the CLI's text tree lacks %s %s:\n%s", r.Name, r.Text, out.String())
				}
			}
			for _, want := range tc.notes {
				found := false
				for _, r := range fromServer {
					found = found || r.Text == want
				}
				if !found {
					t.Errorf("no row shows %s: %+v", want, fromServer)
				}
			}
		})
	}
}
