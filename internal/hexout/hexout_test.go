package hexout

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestAppendEncode compares with encoding/hex for every byte value at
// every position of the 32-, 16- and 8-byte loops, every length up to
// 100, and an existing prefix in dst, with each block loop.
func TestAppendEncode(t *testing.T) { loops(t, testAppendEncode) }

func testAppendEncode(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for shift := range 32 {
		src := append(all[shift:], all[:shift]...)
		if got, want := AppendEncode(nil, src), hex.AppendEncode(nil, src); !bytes.Equal(got, want) {
			t.Fatalf("shift %d: got %s, want %s", shift, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 101 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		got := AppendEncode([]byte("prefix:"), src)
		want := hex.AppendEncode([]byte("prefix:"), src)
		if !bytes.Equal(got, want) {
			t.Fatalf("len %d: got %s, want %s", n, got, want)
		}
	}
}

// TestUnaligned encodes from and into every alignment, with each block
// loop.
func TestUnaligned(t *testing.T) { loops(t, testUnaligned) }

func testUnaligned(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for from := range 33 {
		for pre := range 33 {
			src := buf[from : from+200]
			got := AppendEncode(make([]byte, pre, pre+400), src)
			want := hex.AppendEncode(make([]byte, pre), src)
			if !bytes.Equal(got, want) {
				t.Fatalf("src at %d, dst at %d: got %s, want %s", from, pre, got, want)
			}
		}
	}
}

// TestEncodePairs checks the portable loop (what other processors and
// the purego build use) on every build, at every length up to 100.
func TestEncodePairs(t *testing.T) {
	all := make([]byte, 356)
	for i := range all {
		all[i] = byte(i)
	}
	for n := range 101 {
		for _, src := range [][]byte{all[:n], all[256-n/2 : 256-n/2+n]} {
			out := make([]byte, 2*len(src))
			encodePairs(out, src)
			if want := hex.EncodeToString(src); string(out) != want {
				t.Fatalf("len %d: got %s, want %s", n, out, want)
			}
		}
	}
}

// loops runs f as a subtest once with each block loop (eachLoop).
func loops(t *testing.T, f func(t *testing.T)) {
	eachLoop(func(name string) { t.Run(name, f) })
}

func FuzzAppendEncode(f *testing.F) {
	f.Add([]byte{}, []byte{0, 0x9a, 0xff, 0x10, 1, 2, 3, 4, 5, 6, 7})
	f.Fuzz(func(t *testing.T, dst, src []byte) {
		// The fuzzer's slices may share memory; appending to dst must not
		// write over src.
		dst, src = bytes.Clone(dst), bytes.Clone(src)
		want := hex.AppendEncode(bytes.Clone(dst), src)
		eachLoop(func(name string) {
			if got := AppendEncode(bytes.Clone(dst), src); !bytes.Equal(got, want) {
				t.Fatalf("%s: got %s, want %s", name, got, want)
			}
		})
	})
}

func BenchmarkAppendEncode(b *testing.B) {
	src := make([]byte, 1024)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, 0, 2*len(src))
	b.Run("hexout", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = AppendEncode(dst[:0], src)
		}
	})
	b.Run("encoding-hex", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = hex.AppendEncode(dst[:0], src)
		}
	})
}

// TestReserveDoubles: Reserve leaves a buffer with room as it is, and
// otherwise makes room for the larger of what was asked and the old
// capacity after its bytes, keeping them (and not the rest of the old
// capacity); so a full line appended to value by value is copied a
// logarithmic number of times.
func TestReserveDoubles(t *testing.T) {
	b := make([]byte, 3, 10)
	copy(b, "abc")
	if got := Reserve(b, 7); &got[0] != &b[0] {
		t.Error("Reserve copied a buffer that had room")
	}
	got := Reserve(b, 8)
	if cap(got) < 3+10 || string(got) != "abc" {
		t.Errorf("Reserve(len 3 cap 10, 8): cap %d %q, want room for the old capacity after the bytes, and the bytes kept", cap(got), got)
	}
	if got := Reserve(b, 100); cap(got) < 103 || cap(got) > 2*103 {
		t.Errorf("Reserve(len 3 cap 10, 100): cap %d, want the 103 asked for (rounded to a size class)", cap(got))
	}
	// Only the bytes are copied, not the rest of the capacity (a kept
	// buffer's old line): the new room holds none of it.
	old := make([]byte, 1<<16)
	for i := range old {
		old[i] = 0xff
	}
	copy(old, "abc")
	grown := Reserve(old[:3], 1<<16)
	if string(grown) != "abc" || cap(grown) < 3+1<<16 {
		t.Fatalf("Reserve(len 3 cap 64Ki, 64Ki): cap %d %q", cap(grown), grown)
	}
	for i, c := range grown[3:cap(grown)] {
		if c != 0 {
			t.Fatalf("byte %d of the new room is %#x: the old capacity was copied", 3+i, c)
		}
	}
	var line []byte
	copies := 0
	for i := 0; i < 1000; i++ {
		before := cap(line)
		line = AppendEncode(line, make([]byte, 1000))
		if cap(line) != before {
			copies++
		}
	}
	if copies > 12 {
		t.Errorf("2 MB appended 2 KB at a time grew the buffer %d times, want at most 12", copies)
	}
}
