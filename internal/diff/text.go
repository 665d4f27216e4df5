package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/manifester/manifester/internal/render/text"
)

// WriteText writes the version diff for a terminal, request then response.
func (d *VersionDiff) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	rel := ""
	if d.Release != "" {
		rel = " in " + text.Escape(d.Release)
	}
	fmt.Fprintf(bw, "%s (key %d) v%d -> v%d%s\n", d.API, d.Key, d.From, d.To, rel)
	for _, md := range []*MessageDiff{&d.Request, &d.Response} {
		fmt.Fprintln(bw)
		md.writeText(bw)
	}
	return bw.Flush()
}

func (md *MessageDiff) writeText(w io.Writer) {
	fmt.Fprintln(w, md.Message)
	fmt.Fprintf(w, "  flexible        %s\n", pairText(yesNo(md.Flexible.From), yesNo(md.Flexible.To)))
	fmt.Fprintf(w, "  header version  %s\n", pairText(fmt.Sprint(md.HeaderVersion.From), fmt.Sprint(md.HeaderVersion.To)))
	fmt.Fprintf(w, "  smallest frame  %d -> %d bytes (%+d)\n", md.Size.From, md.Size.To, md.Size.Delta())
	if len(md.Structs) == 0 {
		fmt.Fprintln(w, "  fields          no changes")
	}
	for _, sd := range md.Structs {
		name := md.Message
		if sd.Path != "" {
			name += "." + sd.Path + " (" + sd.Struct + ")"
		}
		fmt.Fprintf(w, "  %s\n", name)
		for _, f := range sd.Removed {
			writeField(w, "-", f, 4)
		}
		for _, f := range sd.Added {
			writeField(w, "+", f, 4)
		}
		for _, fc := range sd.Changed {
			for _, c := range fc.Changes {
				detail := ""
				if c.Detail != "" {
					detail = " (" + c.Detail + ")"
				}
				fmt.Fprintf(w, "    ~ %s: %s %s -> %s%s\n", fc.Name, c.Property, text.Escape(c.From), text.Escape(c.To), text.Escape(detail))
			}
		}
	}
	if len(md.Comments) > 0 {
		fmt.Fprintln(w, "  spec comments")
		for _, c := range md.Comments {
			fmt.Fprintf(w, "    line %d: %s\n", c.Line, text.Escape(c.Text))
		}
	}
}

// writeField writes a field added or removed, and the fields under it.
// Its name, type and attributes come from the spec: a string field's
// default may hold any character, so they are escaped for the terminal.
func writeField(w io.Writer, mark string, f FieldInfo, indent int) {
	fmt.Fprintf(w, "%s%s %s %s (%s)\n", strings.Repeat(" ", indent), mark, text.Escape(f.Name), text.Escape(f.Type), text.Escape(f.Attrs()))
	for _, sub := range f.Fields {
		writeField(w, " ", sub, indent+2)
	}
}

func pairText(a, b string) string {
	if a == b {
		return a + " (unchanged)"
	}
	return a + " -> " + b
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// WriteText writes the release diff for a terminal.
func (d *ReleaseDiff) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	from, to := text.Escape(d.From), text.Escape(d.To) // labels: a PROVENANCE file's text
	fmt.Fprintf(bw, "Kafka %s -> %s\n", from, to)
	fmt.Fprintf(bw, "\nAPIs added (%d)\n", len(d.Added))
	for _, a := range d.Added {
		fmt.Fprintf(bw, "  %3d %s v%s\n", a.Key, a.Name, a.Versions)
	}
	fmt.Fprintf(bw, "\nAPIs removed (%d)\n", len(d.Removed))
	for _, a := range d.Removed {
		note := "file gone"
		if a.Reserved {
			note = "key reserved in " + to
		}
		fmt.Fprintf(bw, "  %3d %s v%s (%s)\n", a.Key, a.Name, a.Versions, note)
	}
	fmt.Fprintf(bw, "\nAPIs changed (%d)\n", len(d.Changed))
	for _, c := range d.Changed {
		fmt.Fprintf(bw, "  %3d %s %s\n", c.Key, c.Name, strings.Join(c.notes(), "; "))
		for _, r := range c.Redefined {
			writeRedefined(bw, r.Version, "request", r.Request)
			writeRedefined(bw, r.Version, "response", r.Response)
		}
	}
	fmt.Fprintf(bw, "\nUnstable latest versions in %s (%d)\n", to, len(d.Unstable))
	for _, a := range d.Unstable {
		fmt.Fprintf(bw, "  %3d %s v%s\n", a.Key, a.Name, a.Versions)
	}
	return bw.Flush()
}

// writeRedefined writes one line per changed struct of a version that two
// releases define differently.
func writeRedefined(w io.Writer, v int16, kind string, sds []StructDiff) {
	for _, l := range RedefinedLines(v, kind, sds, "-", "->") {
		fmt.Fprintf(w, "        %s\n", text.Escape(l)) // a default is any text
	}
}

// RedefinedLines describes the struct changes of a version that two
// releases define differently, one line per struct ("v0 response
// Results.Partitions: +LeaderEpoch", "v3 request (body): ~GenerationId
// renamed to GenerationIdOrMemberEpoch (same bytes)"). minus and arrow
// are the glyphs for a removed field and for a change ("-" and "->" in
// plain text).
func RedefinedLines(v int16, kind string, sds []StructDiff, minus, arrow string) []string {
	var out []string
	for _, sd := range sds {
		var parts []string
		for _, f := range sd.Removed {
			parts = append(parts, minus+f.Name)
		}
		for _, f := range sd.Added {
			parts = append(parts, "+"+f.Name)
		}
		for _, fc := range sd.Changed {
			for _, c := range fc.Changes {
				if c.Property == "name" {
					parts = append(parts, fmt.Sprintf("~%s renamed to %s (same bytes)", c.From, c.To))
					continue
				}
				parts = append(parts, fmt.Sprintf("~%s %s %s %s %s", fc.Name, c.Property, c.From, arrow, c.To))
			}
		}
		path := sd.Path
		if path == "" {
			path = "(body)"
		}
		out = append(out, fmt.Sprintf("v%d %s %s: %s", v, kind, path, strings.Join(parts, ", ")))
	}
	return out
}

// Notes returns the changes of an API as short phrases, as the text form
// lists them ("versions 0-11 -> 3-12", "baseline raised", ...).
func (c *APIChange) Notes() []string { return c.notes() }

// notes returns the changes of an API as short phrases.
func (c *APIChange) notes() []string {
	notes := []string{"versions " + pairText(c.Valid.From, c.Valid.To)}
	if c.FormerName != "" {
		notes = append(notes, "renamed from "+c.FormerName)
	}
	if c.Lowest != "" {
		notes = append(notes, "baseline "+c.Lowest)
	}
	if len(c.RemovedVersions) > 0 {
		notes = append(notes, "removed v"+strings.Join(c.RemovedVersions, ", v"))
	}
	if len(c.NewVersions) > 0 {
		notes = append(notes, "new v"+strings.Join(c.NewVersions, ", v"))
	}
	if c.ResponseValid != nil {
		notes = append(notes, "response versions "+pairText(c.ResponseValid.From, c.ResponseValid.To))
	}
	if c.Unstable != nil {
		notes = append(notes, "unstable "+orNone(c.Unstable.From)+" -> "+orNone(c.Unstable.To))
	}
	if c.Flexible != nil {
		notes = append(notes, "flexible "+c.Flexible.From+" -> "+c.Flexible.To)
	}
	for _, l := range c.ListenersAdded {
		notes = append(notes, "listener +"+l)
	}
	for _, l := range c.ListenersRemoved {
		notes = append(notes, "listener -"+l)
	}
	return notes
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return "v" + s
}

// WriteJSON writes v (a *VersionDiff or *ReleaseDiff) as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
