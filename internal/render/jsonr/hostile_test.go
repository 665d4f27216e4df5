package jsonr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/testframes"
)

func inflating(t testing.TB) *codec.Codec {
	c := testframes.Codec(t, "4.3")
	c.Decompress = compress.Decompressor()
	c.DecompressLimit = compress.LimitDecompressor()
	return c
}

// Bounds for a hostile frame of about 100 KB (see report's hostile
// tests, which check the decode's own bounds).
const (
	hostileSize  = 100 << 10
	maxPeakHeap  = 384 << 20
	maxTotalHeap = 1 << 30
	// outputSlack is what a line may exceed its budget by: the frame's
	// fields and the note that says what was cut.
	outputSlack = 8 << 10
)

// TestHostileLinesBounded writes the lines of the frames of issue 9 (many
// small compressed batches, record-dense batches, megabytes of zeros) in
// all four codecs, and checks that memory and output stay within bounds,
// that the line is valid JSON and that it says where the budget was spent.
func TestHostileLinesBounded(t *testing.T) {
	c := inflating(t)
	for _, sh := range hostile.Shapes {
		for _, cd := range hostile.Codecs {
			name := sh.Name + "/" + records.CompressionName(cd)
			b := sh.Build(cd, hostileSize)
			var out bytes.Buffer
			var f *report.Frame
			u := hostile.Measure(func() {
				f = report.Decode(c, b, report.Options{Lean: true})
				if err := Line(&out, f); err != nil {
					t.Fatal(err)
				}
			})
			max := f.RenderBudget().MaxOutput
			t.Logf("%s: %d bytes in, %d bytes out, peak heap %d MiB, allocated %d MiB; %s", name, len(b), out.Len(), u.Peak>>20, u.Total>>20, f.Budget)
			if u.Peak > maxPeakHeap || u.Total > maxTotalHeap {
				t.Errorf("%s: peak heap %d MiB, allocated %d MiB; want at most %d and %d MiB", name, u.Peak>>20, u.Total>>20, maxPeakHeap>>20, maxTotalHeap>>20)
			}
			if int64(out.Len()) > max+outputSlack {
				t.Errorf("%s: %d bytes of output, budget %d", name, out.Len(), max)
			}
			if !json.Valid(out.Bytes()) {
				t.Errorf("%s: the line is not valid JSON", name)
			}
			if f.Budget != "" && !strings.Contains(out.String(), "budget") {
				t.Errorf("%s: the line does not say the budget was spent", name)
			}
		}
	}
}

// TestLineOutputBudget checks that the line stops at the output budget,
// says so in "output_truncated", and stays valid JSON.
func TestLineOutputBudget(t *testing.T) {
	c := inflating(t)
	b := hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(3000), 3000))
	lim := budget.Limits{Output: 100 << 10}
	for _, lean := range []bool{false, true} {
		var js bytes.Buffer
		if err := Line(&js, report.Decode(c, b, report.Options{Limits: lim, Lean: lean})); err != nil {
			t.Fatal(err)
		}
		if js.Len() > 100<<10+outputSlack || js.Len() < 50<<10 {
			t.Errorf("lean %v: %d bytes for a budget of 100 KiB", lean, js.Len())
		}
		var v map[string]any
		if err := json.Unmarshal(js.Bytes(), &v); err != nil {
			t.Fatalf("lean %v: %v", lean, err)
		}
		if s, _ := v["output_truncated"].(string); !strings.Contains(s, "tree node") || !strings.Contains(s, "output budget of 100 KiB for this frame spent") {
			t.Errorf("lean %v: output_truncated = %q", lean, s)
		}
	}
	// Without a limit the same frame is written whole: bigger, no note.
	whole, err := AppendLine(nil, report.Decode(c, b, report.Options{Lean: true}), Options{})
	if err != nil || len(whole) <= 200<<10 || bytes.Contains(whole, []byte("output_truncated")) {
		t.Errorf("default budget: %d bytes (%v), truncated %v", len(whole), err, bytes.Contains(whole, []byte("output_truncated")))
	}
}

// TestBudgetLineMatchesEncodingJSON checks that a frame whose inflation
// budget was reached (so it carries "budget") is written as encoding/json
// writes it, key order included.
func TestBudgetLineMatchesEncodingJSON(t *testing.T) {
	c := inflating(t)
	batch := hostile.Batch(hostile.Gzip, make([]byte, 64<<10), 1)
	f := report.Decode(c, hostile.Produce(batch, batch), report.Options{Limits: budget.Limits{Inflate: 100 << 10}})
	if f.Budget == "" {
		t.Fatal("no budget note")
	}
	want := refLine(t, f, true)
	got, err := AppendLine(nil, f, Options{About: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("AppendLine differs from encoding/json:\n got %.300s\nwant %.300s", got, want)
	}
}

// BenchmarkHostileFrame measures the decode and JSON line of the issue's
// frame of gzip batches of small records (32 KB), which reaches the node
// budget: the cost of a frame that spends its budget.
func BenchmarkHostileFrame(b *testing.B) {
	c := inflating(b)
	in := hostile.DenseExample(32 << 10)
	var out []byte
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		f := report.Decode(c, in, report.Options{Lean: true})
		var err error
		if out, err = AppendLine(out[:0], f, Options{}); err != nil || f.Budget == "" {
			b.Fatal(err, f.Budget)
		}
	}
}
