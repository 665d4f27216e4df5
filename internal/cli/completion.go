package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

func init() {
	register(&command{
		name:    "completion",
		usage:   "bash|zsh|fish",
		summary: "write a shell completion script: commands, flags, their values and API names from the loaded spec",
		run:     runCompletion,
	})
	register(&command{
		name:    completeAPIsCommand,
		usage:   "[--spec P]",
		summary: "", // hidden: the completion scripts call it
		run:     runCompleteAPIs,
		hidden:  true,
	})
}

// completeAPIsCommand prints the API names of the loaded spec, one a line,
// for the completion scripts.
const completeAPIsCommand = "__complete-apis"

// completionCommand is what a script knows about one command.
type completionCommand struct {
	name, summary string
	flags         []flagDoc
	// subs are the command's subcommands (specs fetch), each with its
	// own flags; their name is the word after the command's.
	subs []completionCommand
}

// completionModel collects every visible command and its flags, from the
// same flag definitions the help prints.
func completionModel() []completionCommand {
	var out []completionCommand
	for _, n := range commandNames() {
		c := commands[n]
		if c.hidden {
			continue
		}
		cc := completionCommand{name: n, summary: c.summary}
		if fs := commandFlags(n); fs != nil {
			cc.flags = flagDocs(fs, c.usage)
		}
		for _, sub := range c.subcommands {
			sc := completionCommand{name: sub}
			if fs := commandFlags(n, sub); fs != nil {
				sc.flags = flagDocs(fs, c.usage)
			}
			cc.subs = append(cc.subs, sc)
		}
		out = append(out, cc)
	}
	return out
}

// valueKind is how a flag's value completes: "files", "apis", a list of
// words ("text json"), or "" (anything).
func valueKind(d flagDoc) string {
	ph := d.Placeholder
	switch {
	case ph == "":
		return ""
	case d.Long() == "api":
		return "apis"
	case strings.Contains(ph, "|"):
		return strings.Join(strings.Split(ph, "|"), " ")
	case d.Long() == "color":
		return "auto always never"
	case strings.Contains(ph, "FILE") || strings.Contains(ph, "DIR") || strings.Contains(ph, "PATH") || ph == "P":
		return "files"
	}
	return ""
}

// apiPositional reports whether a command's arguments are API names.
func apiPositional(name string) bool { return name == "show" || name == "diff" }

func runCompletion(env *Env, args []string) error {
	fs := newFlags(env, "completion", "bash|zsh|fish")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("completion takes one shell: bash, zsh or fish")
	}
	m := completionModel()
	switch pos[0] {
	case "bash":
		writeBash(env.Stdout, m, false)
	case "zsh":
		writeBash(env.Stdout, m, true)
	case "fish":
		writeFish(env.Stdout, m)
	default:
		if s := suggest(pos[0], []string{"bash", "zsh", "fish"}); s != "" {
			return usagef("unknown shell %q; did you mean %q?", pos[0], s)
		}
		return usagef("unknown shell %q (want bash, zsh or fish)", pos[0])
	}
	return nil
}

func runCompleteAPIs(env *Env, args []string) error {
	fs := newFlags(env, completeAPIsCommand, "[--spec P]")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	rel, _, err := specs.newest(env)
	if err != nil {
		return errSilentFailure // completion has nothing to offer; say nothing
	}
	var names []string
	for _, a := range rel.Reg.APIs {
		if !a.Reserved() {
			names = append(names, a.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintln(env.Stdout, n)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeBash writes the bash completion script; for zsh, it is loaded
// through bashcompinit.
func writeBash(w io.Writer, m []completionCommand, zsh bool) {
	var names []string
	for _, c := range m {
		names = append(names, c.name)
	}
	if zsh {
		fmt.Fprintln(w, "#compdef manifester")
		fmt.Fprintln(w, "# zsh completion for manifester: eval \"$(manifester completion zsh)\"")
		fmt.Fprintln(w, "autoload -U +X bashcompinit && bashcompinit")
	} else {
		fmt.Fprintln(w, "# bash completion for manifester: eval \"$(manifester completion bash)\"")
	}
	fmt.Fprintf(w, `_manifester_apis() {
  local i spec=()
  for ((i = 2; i < ${#COMP_WORDS[@]}; i++)); do
    case "${COMP_WORDS[i]}" in
      --spec|-s|-spec)
        if [ "${COMP_WORDS[i+1]}" = = ]; then
          spec+=(--spec "${COMP_WORDS[i+2]}")
        else
          spec+=(--spec "${COMP_WORDS[i+1]}")
        fi ;;
      --spec=*|-s=*) spec+=(--spec "${COMP_WORDS[i]#*=}") ;;
    esac
  done
  "${COMP_WORDS[0]}" %s "${spec[@]}" 2>/dev/null
}

_manifester() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" eq=""
  # Bash splits --flag=value into three words at the "=": the value
  # completes as after "--flag ". Zsh (through bashcompinit), and bash
  # without "=" in COMP_WORDBREAKS, give "--flag=value" as one word: the
  # value completes the same, and each answer keeps the "--flag=" before it.
  if [ "$cur" = = ]; then
    cur=""
  elif [ "$prev" = = ] && [ "$COMP_CWORD" -ge 2 ]; then
    prev="${COMP_WORDS[COMP_CWORD-2]}"
  elif [[ "$cur" == -*=* ]]; then
    prev="${cur%%=*}"
    eq="$prev="
    cur="${cur#*=}"
  fi
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W %s -- "$cur"))
    return
  fi
  local flags="" values=""
  case "${COMP_WORDS[1]}" in
`, completeAPIsCommand, shellQuote(strings.Join(names, " ")+" help --help --version"))
	for _, c := range m {
		fmt.Fprintf(w, "    %s)\n", c.name)
		indent := "      "
		for _, sc := range c.subs {
			// After the subcommand's word, its own flags.
			fmt.Fprintf(w, "      if [ \"$COMP_CWORD\" -gt 2 ] && [ \"${COMP_WORDS[2]}\" = %s ]; then\n", shellQuote(sc.name))
			writeBashFlags(w, "        ", sc)
			fmt.Fprintln(w, "      else")
			indent = "        "
		}
		writeBashFlags(w, indent, c)
		if len(c.subs) > 0 {
			var subs []string
			for _, sc := range c.subs {
				subs = append(subs, sc.name)
			}
			fmt.Fprintf(w, "        [ \"$COMP_CWORD\" -eq 2 ] && flags=%s\" $flags\"\n", shellQuote(strings.Join(subs, " ")))
			fmt.Fprintln(w, "      fi")
		}
		fmt.Fprintln(w, "      ;;")
	}
	fmt.Fprint(w, `    help)
      values='commands' ;;
  esac
  case "$values" in
    files) COMPREPLY=($(compgen -f -- "$cur")) ;;
    apis) COMPREPLY=($(compgen -W "$(_manifester_apis)" -- "$cur")) ;;
    shells) COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")) ;;
    commands) COMPREPLY=($(compgen -W `+shellQuote(strings.Join(names, " "))+` -- "$cur")) ;;
    "") COMPREPLY=($(compgen -W "$flags" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "$values" -- "$cur")) ;;
  esac
  if [ -n "$eq" ]; then
    [ -z "$values" ] && COMPREPLY=() # no value completes a flag that takes none
    COMPREPLY=("${COMPREPLY[@]/#/$eq}")
  fi
}
complete -o default -F _manifester manifester
`)
}

// writeBashFlags writes the lines of a bash case branch that set the
// flags and the values to complete of command c, each line indented.
func writeBashFlags(w io.Writer, indent string, c completionCommand) {
	var flags []string
	var cases []string
	for _, d := range c.flags {
		spell := []string{spelled(d.Long())}
		if s := d.Short(); s != "" {
			spell = append(spell, "-"+s)
		}
		flags = append(flags, spell...)
		if k := valueKind(d); k != "" {
			cases = append(cases, fmt.Sprintf("%s  %s) values=%s ;;", indent, strings.Join(spell, "|"), shellQuote(k)))
		}
	}
	flags = append(flags, "--help")
	if c.name == "completion" {
		cases = append(cases, indent+"  *) values='shells' ;;")
	}
	fmt.Fprintf(w, "%sflags=%s\n", indent, shellQuote(strings.Join(flags, " ")))
	if len(cases) > 0 {
		fmt.Fprintf(w, "%scase \"$prev\" in\n%s\n%sesac\n", indent, strings.Join(cases, "\n"), indent)
	}
	if apiPositional(c.name) {
		fmt.Fprintln(w, indent+`[ -z "$values" ] && [[ "$cur" != -* ]] && values=apis`)
	}
}

// fishQuote quotes s for fish.
func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// writeFish writes the fish completion script.
func writeFish(w io.Writer, m []completionCommand) {
	fmt.Fprintln(w, "# fish completion for manifester: manifester completion fish | source")
	fmt.Fprintln(w, "complete -c manifester -f")
	// The --spec flags of the command line, in either spelling, as the
	// bash script reads them.
	fmt.Fprintf(w, `function __manifester_apis
    set -l spec
    set -l next 0
    for w in (commandline -opc)
        if test $next = 1
            set -a spec --spec $w
            set next 0
            continue
        end
        switch $w
            case '--spec' '-s' '-spec'
                set next 1
            case '--spec=*' '-s=*' '-spec=*'
                set -a spec --spec (string replace -r -- '^[^=]*=' '' $w)
        end
    end
    manifester %s $spec 2>/dev/null
end
`, completeAPIsCommand)
	for _, c := range m {
		fmt.Fprintf(w, "complete -c manifester -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range m {
		cond := "'__fish_seen_subcommand_from " + c.name + "'"
		for _, sc := range c.subs {
			// The subcommand's word, and its own flags after it; the
			// command's flags only before it.
			fmt.Fprintf(w, "complete -c manifester -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a %s\n", c.name, sc.name, sc.name)
			writeFishFlags(w, "'__fish_seen_subcommand_from "+c.name+"; and __fish_seen_subcommand_from "+sc.name+"'", sc)
			cond = "'__fish_seen_subcommand_from " + c.name + "; and not __fish_seen_subcommand_from " + sc.name + "'"
		}
		writeFishFlags(w, cond, c)
	}
}

// writeFishFlags writes the fish completions of command c's flags and
// arguments, under the condition cond (quoted).
func writeFishFlags(w io.Writer, cond string, c completionCommand) {
	for _, d := range c.flags {
		line := "complete -c manifester -n " + cond
		if len(d.Long()) == 1 {
			line += " -s " + d.Long()
		} else {
			line += " -l " + d.Long()
			if s := d.Short(); s != "" {
				line += " -s " + s
			}
		}
		switch k := valueKind(d); k {
		case "":
			if d.Placeholder != "" {
				line += " -x"
			}
		case "files":
			line += " -r -F"
		case "apis":
			line += " -x -a '(__manifester_apis)'"
		default:
			line += " -x -a " + fishQuote(k)
		}
		fmt.Fprintln(w, line+" -d "+fishQuote(d.Usage))
	}
	if apiPositional(c.name) {
		fmt.Fprintf(w, "complete -c manifester -n %s -a '(__manifester_apis)'\n", cond)
	}
	if c.name == "completion" {
		fmt.Fprintf(w, "complete -c manifester -n %s -a 'bash zsh fish'\n", cond)
	}
}
