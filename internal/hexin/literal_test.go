package hexin

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pythonRepr writes b as Python 3's repr of a bytes object does: printable
// ASCII as itself, \t \n \r \\ as escapes, the rest \xHH; quoted with '
// unless b holds a ' and no ".
func pythonRepr(b []byte) string {
	q := byte('\'')
	if bytes.IndexByte(b, '\'') >= 0 && bytes.IndexByte(b, '"') < 0 {
		q = '"'
	}
	var s strings.Builder
	s.WriteString("b" + string(q))
	for _, c := range b {
		switch {
		case c == q || c == '\\':
			s.WriteByte('\\')
			s.WriteByte(c)
		case c == '\t':
			s.WriteString(`\t`)
		case c == '\n':
			s.WriteString(`\n`)
		case c == '\r':
			s.WriteString(`\r`)
		case c >= 0x20 && c < 0x7f:
			s.WriteByte(c)
		default:
			fmt.Fprintf(&s, `\x%02x`, c)
		}
	}
	s.WriteByte(q)
	return s.String()
}

// javaArrays writes b as Java's Arrays.toString(byte[]) does (signed).
func javaArrays(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = strconv.Itoa(int(int8(c)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// printers are the programs' ways of printing bytes that Parse reads, each
// written by the program's own formatter or a copy of its rule.
var printers = []struct {
	name  string
	print func([]byte) string
}{
	{"python repr", pythonRepr},
	{"go %q", func(b []byte) string { return fmt.Sprintf("%q", b) }},
	{"go %+q", func(b []byte) string { return fmt.Sprintf("%+q", b) }},
	{"go %v", func(b []byte) string { return fmt.Sprint(b) }},
	{"go %#v", func(b []byte) string { return fmt.Sprintf("%#v", b) }},
	{"java Arrays.toString", javaArrays},
	{"python list", func(b []byte) string { return strings.ReplaceAll(fmt.Sprint(b), " ", ", ") }},
	{"wireshark escaped string", func(b []byte) string {
		var s strings.Builder
		s.WriteByte('"')
		for _, c := range b {
			fmt.Fprintf(&s, `\x%02x`, c)
		}
		s.WriteByte('"')
		return s.String()
	}},
}

// TestProgramPrints: bytes as Python, Go, Java and Wireshark print them
// read back as the same bytes: a Kafka frame whose client id is text (the
// case where an escape is followed by characters), every byte value, UTF-8
// text, quotes and backslashes, random bytes, and none.
func TestProgramPrints(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	inputs := [][]byte{
		{0, 0, 0, 12, 0, 3, 0, 0, 0, 0, 0, 7, 0, 2, 'a', 'b'},
		all,
		[]byte("caf\u00e9 \u6ce8\u6587 \U0001F600"),
		[]byte(`it's "quoted" \ and ' alone`),
		[]byte("only'"),
		random,
		{},
	}
	for _, p := range printers {
		for _, in := range inputs {
			text := p.print(in)
			got, err := Parse(text)
			if len(in) == 0 {
				// No bytes is an error, as for plain hex.
				if err == nil || !strings.Contains(err.Error(), "line 1, column 1: no ") {
					t.Errorf("%s: Parse(%s) = %x, %v; want an error saying there are no bytes", p.name, text, got, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: Parse(%s): %v", p.name, text, err)
				continue
			}
			if !bytes.Equal(got, in) {
				t.Errorf("%s: Parse(%s) = %x, want %x", p.name, text, got, in)
			}
		}
	}
	// Literals over lines, as C and Python concatenate them, and C's octal.
	got, err := Parse("\"\\0\\0\\0\\014\" \n  b'\\x00\\x03' \"\\1\\02\\003\"\r\n")
	if want := []byte{0, 0, 0, 12, 0, 3, 1, 2, 3}; err != nil || !bytes.Equal(got, want) {
		t.Errorf("concatenated literals: %x, %v; want %x", got, err, want)
	}
}

// TestPythonRepr checks pythonRepr, and Parse, against Python's own repr
// when python3 is installed.
func TestPythonRepr(t *testing.T) {
	py := program(t, "python3")
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(255 - i)
	}
	inputs := [][]byte{all, []byte("it's"), []byte(`it's "q"`), []byte(`\x41 and \\`), {0, 0, 0, 12, 'a', 'b'}}
	var script strings.Builder
	for _, in := range inputs {
		fmt.Fprintf(&script, "print(repr(bytes.fromhex(%q)))\n", hex.EncodeToString(in))
	}
	out, err := exec.Command(py, "-c", script.String()).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python3 printed %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, in := range inputs {
		checkPrinted(t, "python3", lines[i], in, pythonRepr)
	}
}

// program is the path of name, or skips the test when it is not installed.
func program(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return p
}

// checkPrinted checks that a program printed in as its copy ours prints it,
// and that Parse reads it back as in.
func checkPrinted(t *testing.T, prog, printed string, in []byte, ours func([]byte) string) {
	t.Helper()
	if printed != ours(in) {
		t.Errorf("%s prints %s\nour copy of its rule %s", prog, printed, ours(in))
	}
	if got, err := Parse(printed); err != nil || !bytes.Equal(got, in) {
		t.Errorf("Parse(%s) = %x, %v; want %x", printed, got, err, in)
	}
}

// TestJavaArrays checks javaArrays, and Parse, against Java's own
// Arrays.toString when java (11 or later, which runs a source file) is
// installed.
func TestJavaArrays(t *testing.T) {
	java := program(t, "java")
	in := make([]byte, 256)
	for i := range in {
		in[i] = byte(i)
	}
	src := filepath.Join(t.TempDir(), "Print.java")
	prog := `public class Print { public static void main(String[] a) {
		byte[] b = new byte[256];
		for (int i = 0; i < 256; i++) b[i] = (byte) i;
		System.out.println(java.util.Arrays.toString(b));
	} }`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(java, src).Output()
	if err != nil {
		t.Fatalf("java: %v", err)
	}
	checkPrinted(t, "java", strings.TrimSpace(string(out)), in, javaArrays)
}

func TestProgramPrintErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Unquoted, an escape followed by characters is refused, not read
		// as hex digits: "\x02ab" is 02 'a' 'b' in Python and Go, not 02 ab.
		{`\x00\x02ab`, `line 1, column 5: \x is followed by 4 hex digits, not two`},
		{`\x0`, `line 1, column 1: \x is followed by 1 hex digit, not two`},
		{`b'\x00ab`, `line 1, column 9: the string is not closed`},
		{"b'\\x00'\nb'ab\n'", `line 2, column 5: the string is not closed`},
		{`"\x0g"`, `line 1, column 2: \x takes two hex digits`},
		{`"\q"`, `line 1, column 2: unknown escape \q`},
		{`"\400"`, `line 1, column 2: octal escape \400 is more than a byte`},
		{`"\ud800"`, `\u takes 4 hex digits of a valid code point`},
		{`"ab" x`, `line 1, column 6: unexpected 'x' between quoted strings`},
		{`"ab\`, `line 1, column 4: a backslash at the end of the input`},
		{`[0, 0, 256]`, `line 1, column 8: "256" is not a byte (-128 to 255)`},
		{`[0, -129]`, `"-129" is not a byte`},
		{`[0, , 1]`, `line 1, column 5: unexpected ','`},
		{`[0, 1`, `the list is not closed`},
		{`[0, 1] 2`, `line 1, column 8: unexpected '2' after the list`},
		{`[0, 1a]`, `line 1, column 6: unexpected 'a' after a number`},
		{`[0, x]`, `unexpected 'x' in a list of decimal bytes`},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v; want an error with %q", tc.in, err, tc.want)
		}
	}
	// The shapes already read keep their reading: a C array's "[]" and
	// braces, and hex groups of two digits after \x or of any even count
	// after 0x.
	for in, want := range map[string][]byte{
		"unsigned char f[] = { 0x00, 0x1c };": {0, 0x1c},
		`\x00\x1c`:                            {0, 0x1c},
		"0x0000001c":                          {0, 0, 0, 0x1c},
		"0x0 0xc 0x1c":                        {0, 0xc, 0x1c},
	} {
		if got, err := Parse(in); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Parse(%s) = %x, %v; want %x", in, got, err, want)
		}
	}
}

// FuzzProgramPrints: whatever bytes, every printer's text reads back as
// them.
func FuzzProgramPrints(f *testing.F) {
	f.Add([]byte{0, 0, 0, 12, 0, 3, 'a', 'b'})
	f.Add([]byte("\\'\"\x7f\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		for _, p := range printers {
			text := p.print(b)
			if _, isHex := quotedHex(text); quoted(text) && isHex {
				continue // hex in quotes: b'ab' is the byte ab (see TestQuotedHex)
			}
			got, err := Parse(text)
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%s: Parse(%s) = %x, %v; want %x", p.name, text, got, err, b)
			}
		}
	})
}

// TestQuotedHex: hex in quotes (a JSON string's value copied with its
// quotes) reads as hex, not as the characters of a literal, and its errors
// keep their columns; with an escape, or any character that is not hex, it
// is a literal.
func TestQuotedHex(t *testing.T) {
	for in, want := range map[string][]byte{
		`"0000000c0003"`:    {0, 0, 0, 0x0c, 0, 3},
		`'00 00 00 0c'`:     {0, 0, 0, 0x0c},
		` b"00:0c" "ab"`:    {0, 0x0c, 0xab},
		`b'ab'`:             {0xab},
		`b'\x00ab'`:         {0, 'a', 'b'},
		`"00 0c x"`:         []byte("00 0c x"),
		"\"\u00e9t\u00e9\"": []byte("\u00e9t\u00e9"),
	} {
		if got, err := Parse(in); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Parse(%s) = %x, %v; want %x", in, got, err, want)
		}
	}
	if _, err := Parse(`"0000000g"`); err != nil {
		t.Errorf("a quoted string that is not hex reads as characters: %v", err)
	}
	if _, err := Parse(`"0000000c0"`); err == nil || !strings.Contains(err.Error(), "line 1, column 2: odd number of hex digits") {
		t.Errorf("quoted hex with an odd digit count: %v", err)
	}
}
