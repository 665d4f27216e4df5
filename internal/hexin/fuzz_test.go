package hexin

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
)

// xxdLike formats b as xxd does (groups of two bytes, ASCII column).
func xxdLike(b []byte) string {
	var s strings.Builder
	for off := 0; off < len(b); off += 16 {
		row := b[off:min(off+16, len(b))]
		fmt.Fprintf(&s, "%08x: ", off)
		var hx strings.Builder
		for i := 0; i < len(row); i += 2 {
			hx.WriteString(hex.EncodeToString(row[i:min(i+2, len(row))]) + " ")
		}
		fmt.Fprintf(&s, "%-40s ", hx.String())
		for _, c := range row {
			if c >= 0x20 && c < 0x7f {
				s.WriteByte(c)
			} else {
				s.WriteByte('.')
			}
		}
		s.WriteByte('\n')
	}
	return s.String()
}

// FuzzParse parses arbitrary text as hex. It must not panic, it must
// give at most a byte a character besides what the "*" lines may stand
// for in all, and whatever it accepts must survive being written as
// plain hex and read again.
func FuzzParse(f *testing.F) {
	reg, err := schema.Load(testshared.Spec(f, "4.3"))
	if err != nil {
		f.Fatal(err)
	}
	vs, err := vectors.Generate(codec.New(reg))
	if err != nil {
		f.Fatal(err)
	}
	for i, v := range vs {
		f.Add(v.Hex)
		if i%7 == 0 { // every shape for a sample of the vectors
			b, _ := hex.DecodeString(v.Hex)
			f.Add(xxdLike(b))
			f.Add(strings.Join(strings.SplitAfterN(v.Hex, "", -1), " "))
		}
	}
	f.Add("\t0x0000:  4500 002c 0001 0000 4006 0000 7f00 0001  E..,....@.......\n")
	f.Add("00000000  00 00 00 1c 00 21 00 02  00 00 00 07 00 04 74 65  |.....!........te|\n")
	// Squeezed lines, which expand beyond the input.
	f.Add("00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n00000100  00 01\n*\n00001000  02\n00001001\n")
	f.Add("0000000 0000 0000 0000 0000 0000 0000 0000 0000\n*\n0000100 0001\n0000102\n")
	const maxSqueezed = 1 << 20
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseMax(s, maxSqueezed)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// The "*" lines stand for at most maxSqueezed bytes in all;
		// everything else is at most a byte a character.
		if len(b) > len(s)+maxSqueezed {
			t.Fatalf("%d bytes from %d characters", len(b), len(s))
		}
		again, err := Parse(hex.EncodeToString(b))
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("plain hex of the result does not parse back: %v", err)
		}
	})
}

// TestVectorsAsDumps reads every vector back from an xxd-style dump, whose
// ASCII columns often look like hex.
func TestVectorsAsDumps(t *testing.T) {
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := vectors.Generate(codec.New(reg))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		b, _ := hex.DecodeString(v.Hex)
		got, err := Parse(xxdLike(b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s v%d %s: %v\n%s", v.Name, v.Version, v.Kind, err, xxdLike(b))
		}
	}
}
