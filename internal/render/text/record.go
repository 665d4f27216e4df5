package text

import (
	"bytes"
	"fmt"
	"io"

	"github.com/manifester/manifester/internal/recpage"
)

// RecordPage writes the page of one internal-topic record type: the
// summary, the byte grid and object tree of its smallest instance (framed
// as it sits in a record), and its schema. As in [Page], every text that
// comes from the schema file (the schema with its comments among them) is
// escaped for the terminal.
func RecordPage(w io.Writer, p *recpage.Page) error {
	var b bytes.Buffer
	b.WriteString(Escape(p.Name) + "\n\n")
	labels := make([]string, len(p.Summary))
	width := 0
	for i, it := range p.Summary {
		labels[i] = Escape(it.Label)
		width = max(width, len(labels[i]))
	}
	for i, it := range p.Summary {
		fmt.Fprintf(&b, "%-*s  %s\n", width, labels[i], Escape(it.Value))
	}
	b.WriteString("\n" + Escape(p.Title) + "\n\n")
	Grid(&b, p.Bytes)
	b.WriteString("\nobject tree\n\n")
	Tree(&b, p.Spans)
	b.WriteString("\nkafka record schema (.json)\n\n")
	b.WriteString(EscapeBlock(p.Schema))
	_, err := w.Write(b.Bytes())
	return err
}
