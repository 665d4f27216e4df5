package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/manifester/manifester/internal/logseg"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// runDecodeSegment decodes a partition's log segment (or a KRaft
// snapshot) entry by entry, streaming, and prints one report per entry
// (report.DecodeEntry) in file order: a summary line each, with -v the
// grid and tree, or one JSON line each. The topic whose records are
// interpreted is --records-topic, or the one the file's directory names
// (<topic>-<partition>). Entries longer than maxEntry are read past and
// counted; a length that cannot be an entry's ends the reading, and the
// bytes after it are counted. It returns errSilentFailure when an entry
// failed to decode or bytes were left unread.
func runDecodeSegment(env *Env, path string, maxEntry int64, o decodeOptions) error {
	in, name := io.Reader(env.Stdin), "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return failure{err}
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return usagef("%s is a directory: give one of its segment files (00000000000000000000.log), one at a time", text.Escape(path))
		}
		in, name = f, path
	}
	c := o.Release.Codec
	topic := c.RecordsTopic
	if topic == "" && path != "-" {
		topic, _ = logseg.Topic(path)
	}
	if c.RecordSchemas() != nil && c.RecordsTopic == "" {
		switch k, _ := c.RecordSchemas().ForTopic(topic); {
		case k != recschema.KindNone:
			fmt.Fprintf(env.Stderr, "manifester decode: %s: the records of %s (the directory's name), keys and values read as its record types\n", text.Escape(name), topic)
		case topic == "":
			fmt.Fprintf(env.Stderr, "manifester decode: %s: no topic is known (a segment's directory is named <topic>-<partition>), so keys and values stay bytes; --records-topic NAME reads them as an internal topic's\n", text.Escape(name))
		}
	}

	r := logseg.NewReader(bufio.NewReaderSize(in, 1<<16))
	r.Max = maxEntry
	w := bufio.NewWriterSize(env.Stdout, 1<<16)
	var (
		tree                 span.Tree
		line                 []byte
		entries, failed, cut int
		budgeted             int
		skipped              int
		skippedBytes, unread int64
		unreadWhy            string
		zeroTail             bool
		werr                 error
		// rerr is a read error, which ends the reading after the
		// reports before it are written.
		rerr error
	)
	for i := 0; ; i++ {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, logseg.ErrCorrupt) {
			n, zero, restErr := r.Rest()
			unread, unreadWhy, zeroTail = n, err.Error(), zero && restErr == nil
			if restErr != nil {
				rerr = fmt.Errorf("after position %d: %w", r.Offset(), restErr)
			}
			break
		}
		if err != nil {
			rerr = err
			break
		}
		if e.Skipped {
			skipped++
			skippedBytes += e.Size
			// In order with the reports in text; on stderr beside JSON lines.
			note := io.Writer(w)
			if o.Format == "json" {
				note = env.Stderr
			}
			fmt.Fprintf(note, "# entry %d at file offset %d: %d bytes, over the limit of %d (--max-entry): skipped\n", i, e.Offset, e.Size, maxEntry)
			continue
		}
		entries++
		if e.Partial {
			cut++
		}
		f := report.DecodeEntry(c, e.Bytes, topic, e.Partial, report.Options{Lean: true, Limits: o.Limits, Tree: &tree})
		f.Index, f.Offset = i, e.Offset
		if f.Error != "" {
			failed++
		}
		if f.Budget != "" {
			budgeted++
		}
		if o.Format == "json" {
			if line, err = jsonr.AppendLine(line[:0], f, jsonr.Options{About: o.About}); err == nil {
				_, err = w.Write(line)
			}
		} else {
			err = text.Frame(w, f, o.Verbose, o.Style)
		}
		if err != nil {
			werr = err
			break
		}
	}
	if err := w.Flush(); werr == nil {
		werr = err
	}
	if werr != nil {
		return failure{werr}
	}
	msg := fmt.Sprintf("%s: %s", text.Escape(name), entryCount(entries))
	if failed > 0 {
		msg += fmt.Sprintf(", %d failed to decode", failed)
	}
	if cut > 0 {
		msg += ", the last cut short by the end of the file"
	}
	if budgeted > 0 {
		msg += fmt.Sprintf("; %s shown in part (over a budget: --max-inflate, --max-nodes, --max-output)", entryCount(budgeted))
	}
	if skipped > 0 {
		msg += fmt.Sprintf("; %s (%d bytes) over --max-entry skipped", entryCount(skipped), skippedBytes)
	}
	switch {
	case unread > 0 && zeroTail:
		msg += fmt.Sprintf("; then %d bytes of zeros from position %d to the end (a preallocated segment's unused room)", unread, r.Offset()-unread)
	case unread > 0:
		msg += fmt.Sprintf("; %d bytes not read: %s", unread, unreadWhy)
	}
	if rerr != nil {
		msg += "; reading stopped: " + text.Escape(rerr.Error())
	}
	fmt.Fprintf(env.Stderr, "manifester decode: %s\n", msg)
	if rerr != nil || failed > 0 || skipped > 0 || unread > 0 && !zeroTail {
		return errSilentFailure
	}
	return nil
}

// entryCount is "1 entry", "2 entries".
func entryCount(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
