package proxy

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// TestLogLines: every line has conn, event and the endpoints; frames have
// direction; the rewritten Metadata response has rewritten, original_hex
// (the broker's bytes) and hex (the client's); a rewrite event says which
// address became which.
func TestLogLines(t *testing.T) {
	other, _ := net.Listen("tcp", "127.0.0.1:0")
	defer other.Close()
	oh, op, _ := net.SplitHostPort(other.Addr().String())
	pn, _ := strconv.Atoi(op)
	req, resp := metadata(5, oh, int32(pn))
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(req))
		io.ReadFull(c, b)
		c.Write(resp)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	var size [4]byte
	io.ReadFull(c, size[:])
	got := make([]byte, binary32(size))
	io.ReadFull(c, got)
	got = append(size[:], got...)
	c.Close()
	p.Close()

	seen := map[string]int{}
	for _, e := range ev.all {
		line, err := AppendJSON(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		var l map[string]any
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		ev, _ := l["event"].(string)
		seen[ev]++
		if _, ok := l["conn"].(float64); !ok {
			t.Errorf("no conn: %s", line)
		}
		if ev != "listen" && (l["client"] == nil || l["listener"] == nil || l["upstream"] == nil) {
			t.Errorf("endpoints missing: %s", line)
		}
		switch ev {
		case "frame":
			// Decoded lean (the body and hex written from the tree when
			// the line is), the line still says what a full decode does.
			if !e.Frame.Lean() {
				t.Errorf("a frame decoded with its hex and body made before its line: %s", line)
			}
			o := report.Options{}
			if l["kind"] == "response" {
				api, _ := p.cfg.Codec.Reg.API(int16(l["api_key"].(float64)))
				o = report.Options{Kind: schema.TypeResponse, API: api, Version: int16(l["version"].(float64))}
			}
			full, err := jsonr.AppendLine(nil, report.Decode(p.cfg.Codec, e.Data, o), jsonr.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var fl map[string]any
			if err := json.Unmarshal(full, &fl); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"body", "hex", "tree"} {
				if l[k] == nil || !reflect.DeepEqual(l[k], fl[k]) {
					t.Errorf("the %s frame's %q is not a full decode's:\n%v\nwant\n%v", l["kind"], k, l[k], fl[k])
				}
			}
			want := map[string]string{"request": ToBroker, "response": ToClient}[l["kind"].(string)]
			if l["direction"] != want {
				t.Errorf("direction %v for a %v: %s", l["direction"], l["kind"], line)
			}
			if l["kind"] == "response" {
				if l["rewritten"] != true || l["original_hex"] != hex.EncodeToString(resp) || l["hex"] != hex.EncodeToString(got) {
					t.Errorf("rewritten response: rewritten %v, original_hex %v (broker sent %x), hex %v (client got %x)", l["rewritten"], l["original_hex"], resp, l["hex"], got)
				}
			} else if _, ok := l["rewritten"]; ok {
				t.Errorf("a request marked rewritten: %s", line)
			}
		case "rewrite":
			want := "node 1 " + other.Addr().String() + " -> " + p.Listeners()[other.Addr().String()]
			if d, _ := l["detail"].(string); !bytes.Contains([]byte(d), []byte(want)) || l["direction"] != ToClient {
				t.Errorf("rewrite event %q lacks %q", d, want)
			}
		}
	}
	for _, k := range []string{"listen", "open", "frame", "rewrite", "close"} {
		if seen[k] == 0 {
			t.Errorf("no %s line: %v", k, seen)
		}
	}
	if seen["frame"] != 2 || seen["rewrite"] != 1 {
		t.Errorf("lines %v, want 2 frames and 1 rewrite", seen)
	}
}

func binary32(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// concurrently runs f(g, i) for i from 0 to n-1 in each of k goroutines
// g, and waits for them.
func concurrently(k, n int, f func(g, i int)) {
	var wg sync.WaitGroup
	for g := 0; g < k; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				f(g, i)
			}
		}()
	}
	wg.Wait()
}

// recordingWriter keeps every Write call apart.
type recordingWriter struct {
	mu     sync.Mutex
	writes [][]byte
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, append([]byte(nil), b...))
	w.mu.Unlock()
	return len(b), nil
}

// TestLineWriterWritesWholeLines: lines of many writers, some of them
// long, each arrive in one Write call, never interleaved.
func TestLineWriterWritesWholeLines(t *testing.T) {
	rw := &recordingWriter{}
	lw := NewLineWriter(rw)
	concurrently(8, 50, func(g, i int) {
		e := &Event{Kind: EventFault, Conn: g, Detail: string(bytes.Repeat([]byte{'a' + byte(g)}, 1+i*i*40))}
		if err := lw.WriteEvent(e); err != nil {
			t.Error(err)
		}
	})
	if len(rw.writes) != 400 {
		t.Fatalf("%d writes for 400 lines", len(rw.writes))
	}
	for _, w := range rw.writes {
		var l noticeLine
		if bytes.IndexByte(w, '\n') != len(w)-1 || json.Unmarshal(w, &l) != nil {
			t.Fatalf("a write is not one JSON line: %.100q", w)
		}
		if l.Detail != string(bytes.Repeat([]byte{'a' + byte(l.Conn)}, len(l.Detail))) {
			t.Fatal("lines interleaved")
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	w.n++
	return len(b) / 2, nil
}

// A short write is an error, and no later line is written after it (so
// a torn line is the last one).
func TestLineWriterStopsAfterAShortWrite(t *testing.T) {
	fw := &failingWriter{}
	lw := NewLineWriter(fw)
	if err := lw.WriteLine([]byte("one\n")); err != io.ErrShortWrite {
		t.Fatalf("err %v", err)
	}
	if err := lw.WriteLine([]byte("two\n")); err == nil || fw.n != 1 {
		t.Fatalf("wrote on after a short write: err %v, %d writes", err, fw.n)
	}
}

// TestLineWriterKeepsLargeBuffers: a line buffer of up to maxKeptLine is
// always kept; a larger one while the lines use a quarter of it, and
// released after releaseAfter lines in a row that do not; one beyond
// maxHeldLine never.
func TestLineWriterKeepsLargeBuffers(t *testing.T) {
	l := NewLineWriter(io.Discard)
	small := make([]byte, 10, maxKeptLine)
	l.keep(small)
	if cap(l.buf) != maxKeptLine {
		t.Fatalf("a buffer of %d bytes was not kept", maxKeptLine)
	}
	big := make([]byte, 4<<20, 8<<20)
	l.keep(big)
	if cap(l.buf) != 8<<20 {
		t.Fatalf("a buffer of 8 MiB half used was not kept")
	}
	for i := 1; i < releaseAfter; i++ {
		l.keep(l.buf[:100])
		if cap(l.buf) != 8<<20 {
			t.Fatalf("the 8 MiB buffer was released after %d small lines, want %d", i, releaseAfter)
		}
	}
	l.keep(l.buf[:2<<20]) // a quarter: counts as used, starts again
	for i := 1; i < releaseAfter; i++ {
		l.keep(l.buf[:100])
	}
	if cap(l.buf) != 8<<20 {
		t.Fatalf("a line of a quarter did not reset the count")
	}
	l.keep(l.buf[:100])
	if l.buf != nil {
		t.Fatalf("the 8 MiB buffer is still kept after %d small lines", releaseAfter)
	}
	l.keep(make([]byte, maxHeldLine, maxHeldLine+1))
	if l.buf != nil {
		t.Fatalf("a buffer larger than %d bytes was kept", maxHeldLine)
	}
}

// TestLineWriterReusesItsBuffer: a long line followed by shorter ones
// writes each exactly (nothing of the longer one shows through).
func TestLineWriterReusesItsBuffer(t *testing.T) {
	var out bytes.Buffer
	l := NewLineWriter(&out)
	var want bytes.Buffer
	for _, n := range []int{3 << 20, 10, 2 << 20, 5} {
		e := &Event{Kind: EventFault, Time: time.Unix(0, 0).UTC(), Detail: strings.Repeat("x", n)}
		if err := l.WriteEvent(e); err != nil {
			t.Fatal(err)
		}
		b, err := AppendJSON(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(b)
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Fatalf("the lines written differ from AppendJSON's (%d vs %d bytes)", out.Len(), want.Len())
	}
	if cap(l.buf) < 3<<20 {
		t.Fatalf("the line buffer (%d bytes) was not kept", cap(l.buf))
	}
}

// countingWriter keeps the bytes written and counts the Write calls.
type countingWriter struct {
	bytes.Buffer
	calls int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(b)
}

// TestLineWriterSpillsLongLines: the line of a frame of compressed
// batches, here 60 times the frame, goes out in pieces of about spillAt
// as it is made, and the buffer the writer keeps is a small part of it:
// before, it held the whole line, and a line beyond maxHeldLine was
// dropped and made again from nothing for the next one. The bytes are
// AppendJSON's, one line in all; the lines around it are whole writes.
func TestLineWriterSpillsLongLines(t *testing.T) {
	c := testCodec(t)
	c.Decompress = compress.Decompressor()
	recs := hostile.DenseRecords(20000)
	fr := hostile.Produce(hostile.Batch(hostile.Snappy, recs, 20000), hostile.Batch(hostile.Zstd, recs, 20000))
	f := report.Decode(c, fr, report.Options{Lean: true})
	if !f.OK() {
		t.Fatal(f.Error)
	}
	e := &Event{Kind: EventFrame, Conn: 3, Dir: "request", Client: "c", Listener: "l", Upstream: "u", Frame: f}
	small := &Event{Kind: EventFault, Time: time.Unix(0, 0).UTC(), Detail: "after"}
	want, err := AppendJSON(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 50*len(fr) || len(want) < 4*spillAt {
		t.Fatalf("a line of %d bytes for a frame of %d: not long enough to say anything", len(want), len(fr))
	}
	tail, _ := AppendJSON(nil, small)
	var out countingWriter
	l := NewLineWriter(&out)
	for _, ev := range []*Event{e, small} {
		if err := l.WriteEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out.Bytes(), append(want, tail...)) {
		t.Fatalf("the lines written differ from AppendJSON's (%d vs %d bytes)", out.Len(), len(want)+len(tail))
	}
	if pieces := out.calls - 1; pieces < len(want)/(2*spillAt) {
		t.Errorf("a line of %d bytes went in %d writes", len(want), pieces)
	}
	if kept := cap(l.buf); kept > len(want)/4 || kept > 2*spillAt+16*len(fr) {
		t.Errorf("the writer keeps a buffer of %d bytes for a line of %d", kept, len(want))
	}
	t.Logf("frame %d bytes, line %d bytes in %d writes, buffer kept %d bytes", len(fr), len(want), out.calls-1, cap(l.buf))
}

// TestLineWriterWriteWith: what one WriteWith call writes, in several
// Write calls, comes out together, never with another writer's line
// between its pieces.
func TestLineWriterWriteWith(t *testing.T) {
	rw := &recordingWriter{}
	lw := NewLineWriter(rw)
	concurrently(8, 50, func(g, i int) {
		var err error
		if g%2 == 0 {
			err = lw.WriteWith(func(w io.Writer) error {
				for p := 0; p < 3; p++ {
					if _, err := io.WriteString(w, strconv.Itoa(g)+"-"+strconv.Itoa(i)+"-"+strconv.Itoa(p)+"\n"); err != nil {
						return err
					}
				}
				return nil
			})
		} else {
			err = lw.WriteLine([]byte("line " + strconv.Itoa(g) + "\n"))
		}
		if err != nil {
			t.Error(err)
		}
	})
	for i, w := range rw.writes {
		s := string(w)
		if !strings.HasSuffix(s, "-0\n") {
			continue
		}
		if i+2 >= len(rw.writes) {
			t.Fatalf("a group of three ends early: %q", s)
		}
		head := strings.TrimSuffix(s, "0\n")
		if string(rw.writes[i+1]) != head+"1\n" || string(rw.writes[i+2]) != head+"2\n" {
			t.Fatalf("a group's pieces are apart: %q, %q, %q", s, rw.writes[i+1], rw.writes[i+2])
		}
	}
	if len(rw.writes) != 4*50*3+4*50 {
		t.Fatalf("%d writes, want %d", len(rw.writes), 4*50*3+4*50)
	}
	fw := &failingWriter{}
	lf := NewLineWriter(fw)
	if err := lf.WriteWith(func(w io.Writer) error { _, err := io.WriteString(w, "torn\n"); return err }); err != io.ErrShortWrite {
		t.Fatalf("a short write: err %v", err)
	}
	if err := lf.WriteWith(func(w io.Writer) error { t.Fatal("called after a failed write"); return nil }); err == nil {
		t.Fatal("no error after a failed write")
	}
}
