package textenc

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
)

// utf16Bytes writes s as UTF-16 with a byte order mark, independently of
// the decoder (the standard library's encoder).
func utf16Bytes(s string, le bool) []byte {
	out := []byte{0xfe, 0xff}
	if le {
		out = []byte{0xff, 0xfe}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if le {
			out = append(out, byte(u), byte(u>>8))
		} else {
			out = append(out, byte(u>>8), byte(u))
		}
	}
	return out
}

func TestUTF8(t *testing.T) {
	// ASCII, two-byte, three-byte and a character outside the BMP (a
	// surrogate pair in UTF-16).
	const text = "{\"ClientId\": \"caf\u00e9-\u4e2d-\U0001F600\"}\r\n"
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"utf-8", []byte(text)},
		{"utf-8 with a byte order mark", append([]byte{0xef, 0xbb, 0xbf}, text...)},
		{"utf-16le", utf16Bytes(text, true)},
		{"utf-16be", utf16Bytes(text, false)},
	} {
		got, err := UTF8(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(got) != text {
			t.Errorf("%s: got %q, want %q", tc.name, got, text)
		}
	}
	// Text with no byte order mark is returned as it is, not copied.
	in := []byte(text)
	if got, _ := UTF8(in); &got[0] != &in[0] {
		t.Error("UTF-8 without a byte order mark was copied")
	}
	// A lone byte order mark is empty text.
	for _, bom := range [][]byte{{0xef, 0xbb, 0xbf}, {0xff, 0xfe}, {0xfe, 0xff}} {
		if got, err := UTF8(bom); err != nil || len(got) != 0 {
			t.Errorf("% x: got %q, %v; want empty text", bom, got, err)
		}
	}
}

func TestUTF8Errors(t *testing.T) {
	le := utf16Bytes("ab\U0001F600c", true) // units: a b D83D DE00 c
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"odd length", le[:len(le)-1], "odd length: 11 bytes"},
		{"high half at the end", le[:8], "not paired at byte 6"},
		{"high half before a plain unit", append(le[:8:8], 'x', 0), "not paired at byte 6"},
		{"low half first", append([]byte{0xff, 0xfe, 'a', 0}, 0x00, 0xde, 'b', 0), "not paired at byte 4"},
		{"two high halves", append([]byte{0xfe, 0xff}, 0xd8, 0x3d, 0xd8, 0x3d, 0xde, 0x00), "not paired at byte 2"},
	} {
		got, err := UTF8(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %q, %v; want an error with %q", tc.name, got, err, tc.want)
		}
	}
}

func FuzzUTF8(f *testing.F) {
	f.Add(utf16Bytes("a\u00e9\U0001F600", true))
	f.Add(utf16Bytes("a\u00e9\U0001F600", false))
	f.Add([]byte{0xef, 0xbb, 0xbf, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := UTF8(b)
		if err != nil {
			return
		}
		if len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff) {
			// What was read back as UTF-16 writes the same units again.
			if again := utf16Bytes(string(got), b[0] == 0xff); !bytes.Equal(again, b) {
				t.Fatalf("% x read as %q, which writes back as % x", b, got, again)
			}
		}
	})
}

// NewReader reads what UTF8 reads, as a stream: the same text from every
// shape, in reads of any size, and the same errors.
func TestNewReader(t *testing.T) {
	const text = "{\"ClientId\": \"caf\u00e9-\u4e2d-\U0001F600\"}\r\n"
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"utf-8", []byte(text)},
		{"utf-8 with a byte order mark", append([]byte{0xef, 0xbb, 0xbf}, text...)},
		{"utf-16le", utf16Bytes(strings.Repeat(text, 3000), true)},
		{"utf-16be", utf16Bytes(text, false)},
	} {
		got, err := io.ReadAll(iotest.OneByteReader(NewReader(bufio.NewReader(iotest.HalfReader(bytes.NewReader(tc.in))))))
		want, _ := UTF8(tc.in)
		if err != nil || string(got) != string(want) || !strings.HasPrefix(string(got), text) {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", tc.name, len(got), err, len(want))
		}
	}
	le := utf16Bytes("ab\U0001F600c", true) // units: a b D83D DE00 c
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"odd length", le[:len(le)-1], "odd length: 11 bytes"},
		{"high half at the end", le[:8], "not paired at byte 6"},
		{"high half before a plain unit", append(le[:8:8], 'x', 0), "not paired at byte 6"},
		{"low half first", append([]byte{0xff, 0xfe, 'a', 0}, 0x00, 0xde, 'b', 0), "not paired at byte 4"},
		{"two high halves", append([]byte{0xfe, 0xff}, 0xd8, 0x3d, 0xd8, 0x3d, 0xde, 0x00), "not paired at byte 2"},
	} {
		got, err := io.ReadAll(NewReader(bufio.NewReader(bytes.NewReader(tc.in))))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %q, %v; want an error with %q", tc.name, got, err, tc.want)
		}
	}
}
