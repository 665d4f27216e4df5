// Package budget bounds the work of one unit of decoding (a frame from the
// CLI, a capture frame, a server request, a proxy frame): the bytes
// inflated from compressed record batches, the span nodes built, the bytes
// of rendered output, the nesting depth, and (through a context) the time.
//
// Each limit is proportional to the size of the input, with a fixed
// ceiling, so that a few kilobytes cannot cost gigabytes while real
// traffic, whose compression ratios and record sizes are modest, is never
// cut. [Limits] holds the settings (zero fields take the defaults);
// [Limits.For] makes the [Budget] of one unit of work, which the decoders
// and renderers draw on. When a budget is spent, decoding stops at a clean,
// named point and says so; nothing already decoded is dropped.
package budget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSpent is wrapped by every error that reports a spent budget, for
// errors.Is.
var ErrSpent = errors.New("budget spent")

// ErrDepth is wrapped by the error for nesting deeper than the depth limit.
var ErrDepth = errors.New("nesting deeper than the limit")

// Defaults: each limit is Per times the input size plus Base, at most Max.
const (
	// InflatePerByte, InflateBase and InflateMax bound the bytes inflated
	// from all compressed batches of one frame together: 64 times the
	// input plus 1 MiB, at most 256 MiB.
	InflatePerByte = 64
	InflateBase    = 1 << 20
	InflateMax     = 256 << 20

	// NodesPerByte, NodesBase and NodesMax bound the span nodes built
	// for the records inflated from one frame: 1 per input byte plus
	// 64 Ki, at most 1 Mi. (A record is 8 or more nodes, so this shows
	// every record of batches whose records average 8 compressed bytes
	// or more.) Shown as text, a node costs about 1 KB of memory.
	NodesPerByte = 1
	NodesBase    = 64 << 10
	NodesMax     = 1 << 20

	// TreeNodesPerByte, TreeNodesBase and TreeNodesMax bound the span
	// nodes of the frame's own tree (what is not inflated). A frame
	// cannot have more than a few nodes per byte, so this is a guard
	// that real frames never reach: 8 per byte plus 64 Ki, at most 64 Mi.
	TreeNodesPerByte = 8
	TreeNodesBase    = 64 << 10
	TreeNodesMax     = 64 << 20

	// OutputPerByte, OutputBase and OutputMax bound the rendered text or
	// JSON of one frame: 64 bytes per input byte plus 4 MiB, at most
	// 1 GiB.
	OutputPerByte = 64
	OutputBase    = 4 << 20
	OutputMax     = 1 << 30

	// Depth is the default nesting limit of structs and arrays in a
	// decoded or encoded message. Kafka's own messages nest fewer than 10
	// levels.
	Depth = 64
)

// Limits are the settings of a budget. A zero field takes the default,
// proportional to the input; a positive field is the fixed limit for every
// unit of work (as the CLI's --max-inflate, --max-nodes and --max-output
// set it).
type Limits struct {
	Inflate int64 // bytes inflated from all compressed batches of a unit
	Nodes   int64 // span nodes of inflated records, and separately of the frame's own tree
	Output  int64 // bytes of rendered text or JSON
	Depth   int   // nesting depth of structs and arrays
	// Ceilings replace InflateMax, NodesMax, TreeNodesMax and OutputMax
	// for the proportional defaults when positive (the server uses lower
	// ones).
	InflateMax, NodesMax, TreeNodesMax, OutputMax int64
}

func proportional(n int, per, base, ceil int64) int64 {
	return min(ceil, per*int64(n)+base)
}

// For returns the budget of one unit of work whose input is n bytes.
func (l Limits) For(ctx context.Context, n int) *Budget {
	b := &Budget{ctx: ctx, MaxInflate: l.Inflate, MaxNodes: l.Nodes, MaxTreeNodes: l.Nodes, MaxOutput: l.Output, MaxDepth: l.Depth}
	ceil := func(c, def int64) int64 {
		if c > 0 {
			return c
		}
		return def
	}
	if b.MaxInflate <= 0 {
		b.MaxInflate = proportional(n, InflatePerByte, InflateBase, ceil(l.InflateMax, InflateMax))
	}
	if b.MaxNodes <= 0 {
		b.MaxNodes = proportional(n, NodesPerByte, NodesBase, ceil(l.NodesMax, NodesMax))
	}
	if b.MaxTreeNodes <= 0 {
		b.MaxTreeNodes = proportional(n, TreeNodesPerByte, TreeNodesBase, ceil(l.TreeNodesMax, TreeNodesMax))
	}
	if b.MaxOutput <= 0 {
		b.MaxOutput = proportional(n, OutputPerByte, OutputBase, ceil(l.OutputMax, OutputMax))
	}
	if b.MaxDepth <= 0 {
		b.MaxDepth = Depth
	}
	return b
}

// Budget is what one unit of work may still spend. It is used by one
// goroutine at a time. A nil *Budget imposes the default depth limit only.
type Budget struct {
	MaxInflate   int64
	MaxNodes     int64 // nodes of inflated records
	MaxTreeNodes int64 // nodes of the frame's own tree
	MaxOutput    int64
	MaxDepth     int

	ctx      context.Context
	inflated int64
	// InflatedNodes counts the span nodes built for inflated records;
	// TreeNodes those of the frames' own trees (frames decoded so far).
	InflatedNodes int64
	TreeNodes     int64
	// DetachedRows counts the rows the trees of inflated records were
	// made room for ahead of their records (the node tables allocated),
	// which MaxNodes bounds as it bounds InflatedNodes.
	DetachedRows int64
	// NotInflated counts the compressed areas left compressed because
	// the budget was spent.
	NotInflated int
	// Corrupt counts the compressed areas NoteCorrupt recorded.
	Corrupt      int
	output       int64
	checks       int
	inflateSpent bool
	nodesSpent   bool
	// spent lists the messages of the limits reached, for the report.
	spent []string
	// corrupt lists the compressed areas that did not inflate, or whose
	// inflated records did not decode (NoteCorrupt), for the report.
	corrupt []string
}

// maxCorruptNotes bounds the notes NoteCorrupt keeps (it counts them
// all).
const maxCorruptNotes = 64

// NoteCorrupt records that a compressed area did not inflate, or that its
// inflated records did not decode: what and where, for the frame's
// report, since the decoder only flags them on their nodes (the frame
// itself is well-formed). Nil-safe.
func (b *Budget) NoteCorrupt(what string) {
	if b == nil {
		return
	}
	b.Corrupt++
	if len(b.corrupt) < maxCorruptNotes {
		b.corrupt = append(b.corrupt, what)
	}
}

// CorruptNote returns the note of the i-th compressed area NoteCorrupt
// recorded, from 0 ("" past those kept).
func (b *Budget) CorruptNote(i int) string {
	if b == nil || i < 0 || i >= len(b.corrupt) {
		return ""
	}
	return b.corrupt[i]
}

// Depth returns the nesting limit (the default for a nil budget).
func (b *Budget) Depth() int {
	if b == nil || b.MaxDepth <= 0 {
		return Depth
	}
	return b.MaxDepth
}

// Inflated returns the bytes inflated so far.
func (b *Budget) Inflated() int64 { return b.inflated }

// InflateRoom returns how many more bytes may be inflated: none once a
// compressed area did not fit ([Budget.InflateSpent]).
func (b *Budget) InflateRoom() int64 {
	if b.inflateSpent {
		return 0
	}
	return max(0, b.MaxInflate-b.inflated)
}

// InflateSpent records that a compressed area did not fit in the room
// left: the areas after it are not inflated either.
func (b *Budget) InflateSpent() { b.inflateSpent = true }

// IsInflateSpent reports whether InflateSpent was called.
func (b *Budget) IsInflateSpent() bool { return b.inflateSpent }

// NodesSpent records that the node limit of inflated records was said to
// be reached; IsNodesSpent reports it.
func (b *Budget) NodesSpent()        { b.nodesSpent = true }
func (b *Budget) IsNodesSpent() bool { return b.nodesSpent }

// AddInflated records n inflated bytes.
func (b *Budget) AddInflated(n int) { b.inflated += int64(n) }

// NodeRoom returns how many more nodes inflated records may build.
func (b *Budget) NodeRoom() int64 { return max(0, b.MaxNodes-b.InflatedNodes) }

// OutputRoom returns how many more bytes of output may be rendered.
func (b *Budget) OutputRoom() int64 { return max(0, b.MaxOutput-b.output) }

// AddOutput records n bytes of rendered output.
func (b *Budget) AddOutput(n int) { b.output += int64(n) }

// Err returns the context's error (the client went away, or a timeout
// fired), checking it only every 256th call so that hot loops may call it
// freely. It returns nil for a nil budget or one without a context.
func (b *Budget) Err() error {
	if b == nil || b.ctx == nil {
		return nil
	}
	b.checks++
	if b.checks&255 != 1 {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("decoding cancelled: %w", context.Cause(b.ctx))
	}
	return nil
}

// maxSpent bounds the messages a budget keeps.
const maxSpent = 16

// Spend records that a limit was reached, with a message that names it
// and where, and returns that message as an error wrapping [ErrSpent].
func (b *Budget) Spend(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if len(b.spent) < maxSpent {
		b.spent = append(b.spent, msg)
	}
	return &SpentError{Msg: msg}
}

// Spent returns the messages of the limits reached so far, in order.
func (b *Budget) Spent() []string {
	if b == nil {
		return nil
	}
	return b.spent
}

// SpentError reports a spent budget.
type SpentError struct{ Msg string }

func (e *SpentError) Error() string { return e.Msg }

// Unwrap makes errors.Is(err, ErrSpent) hold.
func (e *SpentError) Unwrap() error { return ErrSpent }

// Size formats a byte count the way the budget messages and docs do:
// "64 MiB", "1.5 MiB", "512 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20:
		return trim(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trim(float64(n)/(1<<10)) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func trim(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// ParseSize reads a size flag: a number of bytes with an optional suffix
// k/K/KiB, m/M/MiB, g/G/GiB (binary units).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	lower := strings.ToLower(t)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with K, M or G (KiB, MiB, GiB)", s)
	}
	return n * mult, nil
}
