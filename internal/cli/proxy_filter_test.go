package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/proxy"
)

// TestProxyFilter runs `manifester proxy --filter` in front of kfake, in the
// proxy's process and in a decoding process of its own, and checks that
// standard output holds only the frames that match (a response matched by
// its request's client id, which it takes from the request), that the log
// still has every event, and that the summary counts what was shown.
func TestProxyFilter(t *testing.T) {
	for _, child := range []bool{true, false} {
		for _, tc := range []struct {
			expr      string
			noLog     bool     // no --log: summary lines decoded without trees, unless the filter reads the body
			want      []string // lines that must be printed
			wantNot   []string // and must not
			wantShown int      // frames printed at least (kgo may ask again)
		}{
			{expr: "api == Metadata", want: []string{"request Metadata(3)", "response Metadata(3)"},
				wantNot: []string{"ApiVersions", "open conn", "# "}, wantShown: 2},
			{expr: `kind == response and client_id == "kgo"`, want: []string{"response ApiVersions(18)", "response Metadata(3)"},
				wantNot: []string{"request ", "open conn"}, wantShown: 2},
			{expr: `kind == response and client_id == "kgo"`, noLog: true, want: []string{"response ApiVersions(18)", "response Metadata(3)"},
				wantNot: []string{"request ", "open conn"}, wantShown: 2},
			// error reads the body: ApiVersions's response has an error
			// code (0), its request none.
			{expr: "api == ApiVersions and error == NONE", noLog: true, want: []string{"response ApiVersions(18)"},
				wantNot: []string{"request ", "Metadata"}, wantShown: 1},
		} {
			t.Run(fmt.Sprintf("decode-process=%v/%s/log=%v", child, tc.expr, !tc.noLog), func(t *testing.T) {
				logPath := filepath.Join(t.TempDir(), "proxy.jsonl")
				args := []string{fmt.Sprintf("--decode-process=%v", child), "--filter", tc.expr}
				if !tc.noLog {
					args = append(args, "--log", logPath)
				}
				out, errOut := runProxyPing(t, args...)
				for _, w := range tc.want {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				for _, w := range tc.wantNot {
					if strings.Contains(out, w) {
						t.Errorf("output has %q, which the filter hides:\n%s", w, out)
					}
				}
				m := regexp.MustCompile(`manifester proxy: --filter "([^"]|\\")*": (\d+) of (\d+) frames shown`).FindStringSubmatch(errOut)
				if m == nil {
					t.Fatalf("no filter summary on stderr:\n%s", errOut)
				}
				shown, _ := strconv.Atoi(m[2])
				total, _ := strconv.Atoi(m[3])
				if n := strings.Count(out, "\n"); n != shown {
					t.Errorf("%d lines printed, and the summary says %d frames shown:\n%s", n, shown, out)
				}
				if shown < tc.wantShown || total < shown+2 {
					t.Errorf("summary says %d of %d frames shown; want at least %d of at least 2 more (the requests or ApiVersions)", shown, total, tc.wantShown)
				}
				if tc.noLog {
					return
				}
				log, err := os.ReadFile(logPath)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range []string{`"event":"open"`, `"api":"ApiVersions"`, `"api":"Metadata"`} {
					if !strings.Contains(string(log), w) {
						t.Errorf("the log, which the filter does not touch, lacks %s", w)
					}
				}
			})
		}
	}
}

// TestProxyFilterBad checks that a filter that does not parse stops the
// proxy before it listens, naming the column.
func TestProxyFilterBad(t *testing.T) {
	_, errOut, code := runCLI(t, "proxy", "--spec", decSpec, "--upstream", "127.0.0.1:1", "--listen", "127.0.0.1:0", "--filter", "api == Nope")
	if code != 2 || !strings.Contains(errOut, "--filter") || !strings.Contains(errOut, "Nope") {
		t.Errorf("exit %d, stderr %q; want 2 and an error naming --filter and the unknown API", code, errOut)
	}
	if strings.Contains(errOut, "listening on") {
		t.Errorf("the proxy listened with a bad filter: %s", errOut)
	}
}

// TestProxyFilterEvents checks which of the proxy's other events a filter
// lets through: faults and skips (what went wrong, and which frames were
// not decoded and so might have matched), not the rest; without a filter,
// everything.
func TestProxyFilterEvents(t *testing.T) {
	c := decCodec(t)
	flt, err := compileFilter("api == Fetch", c.Reg)
	if err != nil {
		t.Fatal(err)
	}
	f, none := newEventFilter(c, flt), newEventFilter(c, nil)
	for _, tc := range []struct {
		kind proxy.EventKind
		want bool
	}{
		{proxy.EventFault, true}, {proxy.EventSkipped, true},
		{proxy.EventOpen, false}, {proxy.EventClose, false}, {proxy.EventListen, false},
		{proxy.EventRewrite, false}, {proxy.EventUnlisten, false},
	} {
		e := &proxy.Event{Kind: tc.kind, Conn: 1}
		if got := f.admit(e); got != tc.want {
			t.Errorf("%s event admitted %v with a filter, want %v", tc.kind, got, tc.want)
		}
		if !none.admit(e) {
			t.Errorf("%s event not admitted without a filter", tc.kind)
		}
	}
}
