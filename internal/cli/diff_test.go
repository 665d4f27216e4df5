package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
)

var diffSpecs = testshared.SpecPath("") + "/"

// runDiffCmd runs the command line in-process and returns its exit status,
// standard output and standard error.
func runDiffCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	testshared.Dir(t)
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(env, args)
	return code, out.String(), errb.String()
}

func diffSpecFlag(label string) string { return "--spec=" + label + "=" + diffSpecs + label }

func TestDiffCommandVersions(t *testing.T) {
	code, out, errs := runDiffCmd(t, "diff", diffSpecFlag("4.3"), "Fetch", "v12", "v13")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Fetch (key 1) v12 -> v13 in 4.3",
		"  FetchRequest.Topics (FetchTopic)\n    - Topic string (versions 0-12)\n    + TopicId uuid (versions 13+)\n",
		"  FetchResponse.Responses (FetchableTopicResponse)\n    - Topic string (versions 0-12)\n    + TopicId uuid (versions 13+)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// "Fetch 12..13" is the same request, and --format json carries the
	// same data.
	_, out2, _ := runDiffCmd(t, "diff", "Fetch", "12..13", diffSpecFlag("4.3"))
	if out2 != out {
		t.Errorf("Fetch 12..13 differs from Fetch v12 v13:\n%s", out2)
	}
	code, js, errs := runDiffCmd(t, "diff", diffSpecFlag("4.3"), "--format", "json", "fetch", "12", "13")
	if code != ExitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var d diff.VersionDiff
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	if d.API != "Fetch" || d.From != 12 || d.To != 13 || d.Release != "4.3" || len(d.Request.Structs) != 2 {
		t.Errorf("json diff %+v", d)
	}
}

// With 3.9 and 4.3 loaded, the release is picked per pair: Produce v2 is
// only in 3.9 ("0-11"), v13 only in 4.3 ("3-13"), v3 and v4 in both.
func TestDiffCommandPicksRelease(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"Produce", "v2", "v3"}, "Produce (key 0) v2 -> v3 in 3.9\n"},
		{[]string{"Produce", "v3", "v4"}, "Produce (key 0) v3 -> v4 in 4.3\n"},
		{[]string{"Produce", "v3", "v4", "--in", "3.9"}, "Produce (key 0) v3 -> v4 in 3.9\n"},
		{[]string{"LeaderAndIsr", "v6", "v7"}, "LeaderAndIsr (key 4) v6 -> v7 in 3.9\n"},
	}
	for _, c := range cases {
		args := append([]string{"diff", diffSpecFlag("4.3"), diffSpecFlag("3.9")}, c.args...)
		code, out, errs := runDiffCmd(t, args...)
		if code != ExitOK || !strings.HasPrefix(out, c.want) {
			t.Errorf("%v: exit %d, output starts %q, want %q (%s)", c.args, code, diffFirstLine(out), c.want, errs)
		}
	}
	code, _, errs := runDiffCmd(t, "diff", diffSpecFlag("4.3"), diffSpecFlag("3.9"), "Produce", "v2", "v13")
	if code != ExitUsage || !strings.Contains(errs, "3.9: 0-11") || !strings.Contains(errs, "4.3: 3-13") {
		t.Errorf("Produce v2 v13: exit %d, stderr %q", code, errs)
	}
}

func diffFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestDiffCommandRelease(t *testing.T) {
	code, out, errs := runDiffCmd(t, "diff", diffSpecFlag("3.9"), diffSpecFlag("4.0"), "--release", "3.9", "4.0")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"APIs removed (4)\n    4 LeaderAndIsr v0-7 (key reserved in 4.0)\n    5 StopReplica v0-4 (key reserved in 4.0)\n" +
			"    6 UpdateMetadata v0-8 (key reserved in 4.0)\n    7 ControlledShutdown v0-3 (key reserved in 4.0)\n",
		"    1 Fetch versions 0-17 -> 4-17; baseline raised; removed v0-3;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, js, _ := runDiffCmd(t, "diff", diffSpecFlag("3.9"), diffSpecFlag("4.0"), "--release", "--format=json", "3.9", "4.0")
	var d diff.ReleaseDiff
	if err := json.Unmarshal([]byte(js), &d); code != ExitOK || err != nil || d.From != "3.9" || d.To != "4.0" || len(d.Removed) != 4 {
		t.Errorf("json: exit %d, err %v, %+v", code, err, d)
	}
}

func TestDiffCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"diff", diffSpecFlag("4.3"), "Fetch", "v12"},
		{"diff", diffSpecFlag("4.3"), "Fetch", "v12", "vx"},
		{"diff", diffSpecFlag("4.3"), "--format", "xml", "Fetch", "1", "2"},
		{"diff", diffSpecFlag("4.3"), "NoSuchApi", "1", "2"},
		{"diff", diffSpecFlag("4.3"), "Fetch", "1", "2"},
		{"diff", diffSpecFlag("4.3"), "--in", "9.9", "Fetch", "12", "13"},
		{"diff", diffSpecFlag("4.3"), "--release", "4.3"},
		{"diff", diffSpecFlag("4.3"), "--release", "3.9", "4.3"},
	} {
		code, out, errs := runDiffCmd(t, args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errs, "manifester diff: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with a message", args, code, out, errs)
		}
	}
}

// Vectors per release through the vectors command: ShareGroupHeartbeat is
// "validVersions": "0" in 4.0 and "1" in 4.3, so v0 is only in 4.0's
// vectors and v1 only in 4.3's.
func TestVectorsPerReleaseCommand(t *testing.T) {
	read := func(label string) map[int16]bool {
		code, out, errs := runDiffCmd(t, "vectors", diffSpecFlag(label))
		if code != ExitOK {
			t.Fatalf("vectors %s: exit %d: %s", label, code, errs)
		}
		versions := map[int16]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v vectors.Vector
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if v.Name == "ShareGroupHeartbeat" {
				versions[v.Version] = true
			}
		}
		return versions
	}
	if got := read("4.0"); !got[0] || got[1] {
		t.Errorf("4.0 ShareGroupHeartbeat vector versions %v, want v0 only", got)
	}
	if got := read("4.3"); got[0] || !got[1] {
		t.Errorf("4.3 ShareGroupHeartbeat vector versions %v, want v1 only", got)
	}
}

// TestDiffCommandUnknownAPI: an API no loaded release defines got
// `unknown API "Zzzzzzzz"` and nothing more (a key, `no API has key
// 999`): the error says where the names are listed, and with more than
// one release loaded, that it looked in all of them.
func TestDiffCommandUnknownAPI(t *testing.T) {
	for _, args := range [][]string{
		{"diff", diffSpecFlag("4.3"), "Zzzzzzzz", "1", "2"},
		{"diff", diffSpecFlag("3.9"), diffSpecFlag("4.3"), "999", "1", "2"},
	} {
		code, out, errs := runDiffCmd(t, args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, "manifester apis --spec") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and where the APIs are listed", args, code, out, errs)
		}
	}
	_, _, errs := runDiffCmd(t, "diff", diffSpecFlag("3.9"), diffSpecFlag("4.3"), "999", "1", "2")
	if !strings.Contains(errs, "in 3.9 or 4.3") {
		t.Errorf("stderr %q does not name the releases looked in", errs)
	}
}
