package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionScripts: every command and every flag of every command
// is in the bash, zsh and fish scripts and in the man page, all made from
// the same flag definitions as the help.
func TestCompletionScripts(t *testing.T) {
	outs := map[string]string{}
	for _, args := range [][]string{{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"man"}} {
		code, out, errs := decRun(t, nil, args...)
		if code != ExitOK || errs != "" {
			t.Fatalf("%q: exit %d: %s", args, code, errs)
		}
		outs[strings.Join(args, " ")] = out
	}
	model := completionModel()
	if len(model) < 10 {
		t.Fatalf("%d commands", len(model))
	}
	for _, c := range model {
		for name, out := range outs {
			if !strings.Contains(out, c.name) {
				t.Errorf("%s lacks the command %s", name, c.name)
			}
		}
		for _, d := range c.flags {
			if !strings.Contains(outs["completion bash"], spelled(d.Long())) || !strings.Contains(outs["man"], `\fB`+roff(spelled(d.Long()))+`\fR`) {
				t.Errorf("%s %s missing from the bash script or the man page", c.name, spelled(d.Long()))
			}
			if len(d.Long()) > 1 && !strings.Contains(outs["completion fish"], "-l "+d.Long()) {
				t.Errorf("%s %s missing from the fish script", c.name, spelled(d.Long()))
			}
		}
	}
	if strings.Contains(outs["man"], completeAPIsCommand) {
		t.Errorf("the hidden command is in the man page")
	}
	if code, _, _ := decRun(t, nil, "completion", "tcsh"); code != ExitUsage {
		t.Errorf("completion tcsh: exit %d", code)
	}
	if _, err := exec.LookPath("groff"); err == nil {
		path := filepath.Join(t.TempDir(), "manifester.1")
		if err := os.WriteFile(path, []byte(outs["man"]), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", path).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff: %v: %s", err, out)
		}
	}
	for _, sh := range []string{"zsh", "fish"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		path := filepath.Join(t.TempDir(), "c."+sh)
		if err := os.WriteFile(path, []byte(outs["completion "+sh]), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sh, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v: %s", sh, err, out)
		}
	}
}

// TestBashCompletion sources the bash script and completes command lines,
// with a stand-in for the binary that answers the API-name query and
// shows the --spec it was given. Bash splits --flag=value into three
// words at the "=" (COMP_WORDBREAKS), as the lines after the first
// thirteen give them; zsh, through bashcompinit, gives it as one word, as
// the last four do.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	_, script, _ := decRun(t, nil, "completion", "bash")
	path := filepath.Join(t.TempDir(), "c.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := `source "$1"
manifester() { [ "$1" = __complete-apis ] && printf '%s\n' AlterClientQuotas AlterConfigs Produce "spec=$3"; }
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _manifester; echo "${COMPREPLY[*]}"; }
comp manifester sh
comp manifester show --fo
comp manifester decode --format ''
comp manifester show -s DIR AlterC
comp manifester show --spec=DIR2 spec
comp manifester decode --kind r
comp manifester completion f
comp manifester help dec
comp manifester specs f
comp manifester specs fetch --r
comp manifester specs --s
comp manifester show --spec = DIR3 spec
comp manifester decode --format =
comp manifester decode --kind = req
comp manifester decode --format=j
comp manifester decode --kind=
comp manifester decode --no-such=x
comp manifester show --spec=DIR4 --format=t
`
	out, err := exec.Command("bash", "-c", sim, "sim", path).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v: %s", err, out)
	}
	want := []string{"show", "--format", "text json", "AlterClientQuotas AlterConfigs", "spec=DIR2", "request response", "fish", "decode", "fetch", "--repo", "--spec", "spec=DIR3", "text json", "request",
		// Zsh's bashcompinit gives --flag=value as one word.
		"--format=json", "--kind=request --kind=response", "", "--format=text"}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("completions %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("completion %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// TestCompleteAPIs: the hidden helper lists the loaded spec's API names
// (reserved ones left out) and says nothing without a spec.
func TestCompleteAPIs(t *testing.T) {
	code, out, _ := decRun(t, nil, completeAPIsCommand, "--spec", decSpec)
	if code != ExitOK || !strings.Contains(out, "\nAlterConfigs\n") || strings.Contains(out, "LeaderAndIsr") {
		t.Errorf("exit %d: %q", code, out)
	}
	if code, out, errs := decRun(t, nil, completeAPIsCommand); code != ExitFailure || out != "" || errs != "" {
		t.Errorf("without a spec: exit %d, %q, %q", code, out, errs)
	}
	_, help, _ := decRun(t, nil, "--help")
	if strings.Contains(help, completeAPIsCommand) {
		t.Errorf("the hidden command is listed in the help")
	}
}

// TestSubcommandCompletion: a command's subcommand (specs fetch) is
// offered after the command, and its own flags (--repo) are in the bash
// and fish scripts and in the man page, with its synopsis there on a line
// of its own, as every second synopsis of a command (diff --release).
func TestSubcommandCompletion(t *testing.T) {
	var specs *completionCommand
	for _, c := range completionModel() {
		if c.name == "specs" {
			specs = &c
		}
	}
	if specs == nil || len(specs.subs) != 1 || specs.subs[0].name != "fetch" {
		t.Fatalf("specs in the completion model: %+v", specs)
	}
	fetch := specs.subs[0]
	if len(fetch.flags) == 0 || fetch.flags[0].Long() != "repo" {
		t.Fatalf("specs fetch's flags: %+v", fetch.flags)
	}
	_, fish, _ := decRun(t, nil, "completion", "fish")
	_, man, _ := decRun(t, nil, "man")
	for _, want := range []string{"-a fetch", "__fish_seen_subcommand_from fetch' -l repo"} {
		if !strings.Contains(fish, want) {
			t.Errorf("the fish script lacks %q", want)
		}
	}
	for _, want := range []string{".SS specs fetch\n", `\fB\-\-repo\fR \fIURL\fR`, ".br\n.B manifester diff\n\\-\\-spec A=P"} {
		if !strings.Contains(man, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
	for _, l := range strings.Split(man, "\n") {
		if strings.Contains(l, "] manifester ") {
			t.Errorf("two synopses on one line of the man page: %q", l)
		}
	}
}

// TestFishCompletionSpec: the fish script asks for the API names of the
// --spec on the command line in either spelling, --spec DIR as well as
// --spec=DIR (it read only the second). It runs fish when installed.
func TestFishCompletionSpec(t *testing.T) {
	_, script, _ := decRun(t, nil, "completion", "fish")
	for _, want := range []string{"case '--spec' '-s' '-spec'", "case '--spec=*' '-s=*' '-spec=*'"} {
		if !strings.Contains(script, want) {
			t.Errorf("the fish script's API helper lacks %q", want)
		}
	}
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish not installed: the script is not run")
	}
	path := filepath.Join(t.TempDir(), "c.fish")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := `source $argv[1]
function manifester; test "$argv[1]" = __complete-apis; and echo "spec=$argv[3]"; end
complete -C 'manifester show --spec DIR spec'
complete -C 'manifester show -s=DIR2 spec'
`
	out, err := exec.Command("fish", "-c", sim, path).CombinedOutput()
	if err != nil || string(out) != "spec=DIR\nspec=DIR2\n" {
		t.Errorf("fish: %v: %q", err, out)
	}
}

// TestManEnvironment: the man page's ENVIRONMENT names every variable
// that decides where specs come from and go to.
func TestManEnvironment(t *testing.T) {
	_, man, _ := decRun(t, nil, "man")
	_, env, ok := strings.Cut(man, ".SH ENVIRONMENT\n")
	if !ok {
		t.Fatal("no ENVIRONMENT section")
	}
	env, _, _ = strings.Cut(env, ".SH ")
	for _, v := range []string{"MANIFESTER_SPEC", "MANIFESTER_RECORDS", "MANIFESTER_MAVEN_REPO", "KAFKA_HOME", "GRADLE_USER_HOME", "XDG_CACHE_HOME", "NO_COLOR", "PAGER"} {
		if !strings.Contains(env, `\fB`+roff(v)) && !strings.Contains(env, ", "+roff(v)) {
			t.Errorf("ENVIRONMENT lacks %s", v)
		}
	}
}
