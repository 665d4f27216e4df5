package hexin

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy returns the bytes f allocated (garbage included).
func allocatedBy(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// tsharkBlocks writes n tshark -x frames of one flow, each a TCP segment
// of one payload byte followed by a "Reassembled TCP (1 bytes):" block.
func tsharkBlocks(n int) string {
	var s strings.Builder
	for i := range n {
		s.WriteString("Frame (55 bytes):\n")
		s.WriteString("0000  02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 00   ..............E.\n")
		s.WriteString("0010  00 29 00 00 00 00 40 06 66 c4 0a 00 00 01 0a 00   .2....@.f.......\n")
		s.WriteString("0020  00 02 c3 50 23 84 00 00 03 e8 00 00 00 00 50 18   ...P#.........P.\n")
		fmt.Fprintf(&s, "0030  02 00 ae d0 00 00 %02x                              .......\n", i%256)
		s.WriteString("Reassembled TCP (1 bytes):\n")
		fmt.Fprintf(&s, "0000  %02x                                                .\n", i%256)
	}
	return s.String()
}

// TestReassembledBlocksLinear: a dump of many frames, each with its
// "Reassembled TCP" block, costs memory in proportion to its size. Each
// block's bytes take the place of the segments they were made of; done by
// copying the list of segments so far for each block, n blocks cost n²/2
// segment copies.
func TestReassembledBlocksLinear(t *testing.T) {
	in := tsharkBlocks(4000)
	var segs []Segment
	used := allocatedBy(func() {
		d, err := ParseDump(in)
		if err != nil {
			t.Fatal(err)
		}
		var ok bool
		if segs, ok, err = d.TCPSegments(); err != nil || !ok {
			t.Fatal(ok, err)
		}
	})
	if len(segs) != 4000 {
		t.Fatalf("%d segments; want 4000", len(segs))
	}
	for i, s := range segs {
		if len(s.Payload) != 1 || s.Payload[0] != byte(i%256) {
			t.Fatalf("segment %d: % x", i, s.Payload)
		}
	}
	// ParseDump and TCPSegments: a few copies of the input and a
	// Segment (about 80 bytes) per packet.
	t.Logf("%d bytes of input allocated %d bytes", len(in), used)
	if limit := uint64(16*len(in) + 1<<20); used > limit {
		t.Errorf("%d bytes of input allocated %d bytes; want at most %d", len(in), used, limit)
	}
}

// TestDumpLinesMemory: a dump's lines cost memory in proportion to its
// size, however many of them are blank or headers: each line that says
// nothing is not kept, nor a "*" after another (each was a record of 64
// bytes, beside the line's own 16: a dump of blank lines took 80 bytes a
// byte).
func TestDumpLinesMemory(t *testing.T) {
	for name, filler := range map[string]string{"blank": "\n", "header": "x\n", "squeezed": "*\n"} {
		in := "0000: 00 01\n" + strings.Repeat(filler, 1<<20) + "0002: 02\n"
		if name == "squeezed" {
			in = "0000: 00 01\n" + strings.Repeat(filler, 1<<20) + "0004: 02\n"
		}
		var d *Dump
		used := allocatedBy(func() {
			var err error
			if d, err = ParseDump(in); err != nil {
				t.Fatal(err)
			}
		})
		if got := d.Bytes(); len(got) != 3 && name != "squeezed" || got[len(got)-1] != 2 {
			t.Fatalf("%s: % x", name, got)
		}
		t.Logf("%s: %d bytes of input allocated %d bytes", name, len(in), used)
		// The lines (a string header of 16 bytes each) and a copy.
		if limit := uint64(24*len(in) + 1<<20); used > limit {
			t.Errorf("%s: %d bytes of input allocated %d bytes; want at most %d", name, len(in), used, limit)
		}
	}
}

// TestSpacedDumpLinesMemory is TestDumpLinesMemory for od's and
// hexdump's spaced dumps.
func TestSpacedDumpLinesMemory(t *testing.T) {
	for name, filler := range map[string]string{"blank": "\n", "squeezed": "*\n"} {
		in := "0000000 00 01\n" + strings.Repeat(filler, 1<<20) + "0000002 02\n0000003\n"
		if name == "squeezed" {
			in = "0000000 00 01\n" + strings.Repeat(filler, 1<<20) + "0000004 02\n0000005\n"
		}
		var d *Dump
		used := allocatedBy(func() {
			var err error
			if d, err = ParseDump(in); err != nil {
				t.Fatal(err)
			}
		})
		if got := d.Bytes(); got[len(got)-1] != 2 {
			t.Fatalf("%s: % x", name, got)
		}
		t.Logf("%s: %d bytes of input allocated %d bytes", name, len(in), used)
		if limit := uint64(24*len(in) + 1<<20); used > limit {
			t.Errorf("%s: %d bytes of input allocated %d bytes; want at most %d", name, len(in), used, limit)
		}
	}
}

// TestErrorsQuoteLittle: an error quotes at most a few dozen bytes of the
// input, however long the run it is about (a line of a megabyte of hex
// digits, odd in number; a decimal of a megabyte of digits).
func TestErrorsQuoteLittle(t *testing.T) {
	for name, in := range map[string]string{
		"plain":   strings.Repeat("0", 1<<20+1),
		"dump":    "0000: " + strings.Repeat("0", 1<<20+1),
		"decimal": "[1, " + strings.Repeat("9", 1<<20) + "]",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if len(err.Error()) > 200 {
			t.Errorf("%s: an error of %d bytes: %.120s...", name, len(err.Error()), err)
		}
	}
}
