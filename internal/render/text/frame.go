package text

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// Frame writes the report of one frame for a terminal in style st (the
// zero Style is the reference format): the summary, the error, the other
// versions that decode it, the round-trip verdict, and with verbose the
// byte grid and the object tree (plus a grid and tree for every
// decompressed records area), read from the frame's span tree; without
// verbose, a log segment's entry (report.KindEntry) has a line per record. The grid,
// the trees and the inflated records are bounded by the frame's output
// budget; what does not fit is named, not shown.
func Frame(w io.Writer, f *report.Frame, verbose bool, st Style) error {
	// A bytes.Buffer (a capture's worker's) is written in place; any
	// other writer gets the text a section at a time from a pooled
	// buffer.
	b, direct := w.(*bytes.Buffer)
	if !direct {
		b = frameBufs.Get().(*bytes.Buffer)
		defer putFrameBuf(b)
	}
	base := b.Len() // what w held before this frame
	b.WriteString(Wrap(Safe(f.Summary()), st.Width) + "\n")
	if f.Error != "" {
		b.WriteString(st.Error(Wrap("  error: "+Safe(f.Error), st.Width)) + "\n")
		switch {
		case len(f.AlsoDecodesAs) > 0:
			b.WriteString("  decodes cleanly as " + versionList(f.AlsoDecodesAs) + "\n")
		case f.APIUnknown:
		case f.SearchedVersions():
			b.WriteString("  no other version of this API decodes it cleanly\n")
		}
		if len(f.AsResponse) > 0 {
			b.WriteString(Wrap("  it may be a response: as one it decodes cleanly and re-encodes as "+Safe(report.CandidateNames(f.AsResponse)), st.Width) + "\n")
		}
	}
	if f.Warning != "" {
		b.WriteString("  warning: " + f.Warning + "\n")
	}
	if f.Note != "" {
		b.WriteString("  note: " + f.Note + "\n")
	}
	if len(f.Candidates) > 0 {
		// (With none, a searched frame's error says so; a frame cut before
		// its header was not searched.)
		b.WriteString("  " + candidateText(f) + "\n")
	}
	if f.Roundtrip != nil {
		if *f.Roundtrip {
			b.WriteString("  roundtrip: re-encoding reproduces the input byte for byte\n")
		} else if d := f.RoundtripDiff; d != nil {
			var l strings.Builder
			fmt.Fprintf(&l, "  roundtrip: differs at offset 0x%04x (%d)", d.Offset, d.Offset)
			if d.Field != "" {
				l.WriteString(", " + d.Field)
			}
			fmt.Fprintf(&l, ": input %s, re-encoded %s (sizes %d and %d)", byteText(d.Input), byteText(d.Encoded), d.InputSize, d.EncodedSize)
			if d.Reason != "" {
				l.WriteString("; " + d.Reason)
			}
			b.WriteString(st.Error(Wrap(Safe(l.String()), st.Width)) + "\n")
		}
	}
	if f.Budget != "" {
		b.WriteString("  budget: " + f.Budget + "\n")
	}
	// With verbose, the output goes to w a section at a time (the grid,
	// the tree, each decompressed area's grid and tree), so that a frame
	// of compressible batches, whose text is many times its size, is
	// never whole in memory (unless w is a bytes.Buffer, which holds it
	// all anyway).
	var err error
	flush := func() {
		if direct {
			return
		}
		if err == nil {
			err = writeChunks(w, b.Bytes())
		}
		b.Reset()
	}
	if !verbose && f.Kind == report.KindEntry {
		recordLines(b, f, f.RenderBudget())
	}
	if verbose {
		bud := f.RenderBudget()
		bud.AddOutput(b.Len() - base + 1)
		b.WriteString("\n")
		t := f.SpanTree()
		if t != nil && t.Root() == span.None {
			t = nil
		}
		limitedGrid(b, f.Bytes, t, bud.OutputRoom(), bud, st)
		flush()
		if t != nil {
			b.WriteString("\nobject tree\n\n")
			bud.AddOutput(len("\nobject tree\n\n"))
			limitedTree(b, t, bud.OutputRoom(), bud, st)
			flush()
			if skipped := detached(b, t, bud, st, flush); skipped > 0 {
				b.WriteString("\n" + report.OutputSpent(bud, english.Count(skipped, "decompressed records area")) + "\n")
			}
		}
		b.WriteString("\n")
	}
	flush()
	return err
}

// frameBufs keeps Frame's buffers from one frame to the next (a
// capture's frames are written one after another), so that a section's
// text is not made in a buffer grown anew from nothing.
var frameBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxKeptFrameBuf bounds the buffer frameBufs keeps: one grown past it
// (a huge grid or tree) is let go.
const maxKeptFrameBuf = 1 << 20

func putFrameBuf(b *bytes.Buffer) {
	if b.Cap() <= maxKeptFrameBuf {
		b.Reset()
		frameBufs.Put(b)
	}
}

// writeChunk is the most Frame hands w in one write: a section of a
// frame of compressible batches can be megabytes of text, which a
// buffered writer would pass on in one piece.
const writeChunk = 64 << 10

// writeChunks writes p to w in pieces of at most writeChunk bytes.
func writeChunks(w io.Writer, p []byte) error {
	for len(p) > 0 {
		n := min(len(p), writeChunk)
		if _, err := w.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// minDetachedRoom is the least output room a decompressed area's section
// is started with.
const minDetachedRoom = 1024

// detached writes a heading, a grid and a tree for each decompressed
// records area hung on a node of t, while the budget has room, and
// returns how many areas were left out; flush hands b's text on after
// each area.
func detached(b *bytes.Buffer, t *span.Tree, bud *budget.Budget, st Style, flush func()) int {
	skipped := 0
	visit(t, t.Root(), func(id span.ID, _ int) bool {
		d := t.Detached(id)
		if d == nil {
			return true
		}
		if bud.OutputRoom() < minDetachedRoom {
			skipped++
			return true
		}
		start := b.Len()
		fmt.Fprintf(b, "\n%s\n\n", Wrap(Safe(fmt.Sprintf("%s (%s): decompressed records, offsets within the inflated bytes", t.Path(id), t.ValueText(id))), st.Width))
		bud.AddOutput(b.Len() - start)
		limitedGrid(b, d.Bytes, d, bud.OutputRoom()/2, bud, st)
		b.WriteString("\n")
		bud.AddOutput(1)
		limitedTree(b, d, bud.OutputRoom(), bud, st)
		flush()
		return true
	})
	return skipped
}

// candidateText is the line that names the first candidates of a
// response whose API is not known (it has some).
func candidateText(f *report.Frame) string {
	s := "candidates (decode cleanly and re-encode byte for byte): " + Safe(report.CandidateNames(f.Candidates))
	switch {
	case f.CandidatesCapped():
		s += fmt.Sprintf(" (the search stops at %d)", report.MaxCandidates)
	case f.CandidatesIncomplete:
		s += " (search stopped at its budget)"
	}
	return s
}

func byteText(v int) string {
	if v < 0 {
		return "end of data"
	}
	return fmt.Sprintf("0x%02x", v)
}

func versionList(vs []int16) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "v" + strconv.Itoa(int(v))
	}
	return strings.Join(parts, ", ")
}
