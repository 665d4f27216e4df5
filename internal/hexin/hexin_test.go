package hexin

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDumpFiles parses dumps written by xxd and hexdump (the testdata
// files were produced by those tools from testdata/frame.bin).
func TestDumpFiles(t *testing.T) {
	want := mustRead(t, "testdata/frame.bin")
	for _, name := range []string{"xxd.txt", "xxd-g1.txt", "hexdump-C.txt"} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(string(mustRead(t, filepath.Join("testdata", name))))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("bytes differ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolsLive runs xxd and hexdump (when installed) on bytes whose ASCII
// column looks like hex, the hard case for finding where hex ends.
func TestToolsLive(t *testing.T) {
	data := []byte("\x00\x01deadbeef cafe 0123456789abcdef\xff\xfe ab cd")
	dir := t.TempDir()
	p := filepath.Join(dir, "in.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"xxd"}, {"xxd", "-i"}, {"xxd", "-g1"}, {"xxd", "-g8"}, {"xxd", "-c8"}, {"xxd", "-p"}, {"hexdump", "-C"}, {"od", "-An", "-tx1"}} {
		if _, err := exec.LookPath(args[0]); err != nil {
			continue
		}
		out, err := exec.Command(args[0], append(args[1:], p)...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		got, err := Parse(string(out))
		if err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%v: got %x, want %x\ninput:\n%s", args, got, data, out)
		}
	}
}

func TestPlainShapes(t *testing.T) {
	want := []byte{0x00, 0x00, 0x00, 0x1c, 0xab, 0xCD}
	for _, in := range []string{
		"0000001cabcd",
		"0000001CABCD\n",
		"00 00 00 1c ab cd",
		"00:00:00:1c:ab:cd",
		"0x00 0x00 0x00 0x1c 0xab 0xcd",
		"0x00, 0x00, 0x00, 0x1c, 0xab, 0xcd",
		"0x0000001c 0xabcd",
		"\\x00\\x00\\x00\\x1c\\xab\\xcd",
		"0000 001c\nabcd # a comment",
		"  00-00-00-1c\r\n\tab cd  ",
	} {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Parse(%q) = %x, want %x", in, got, want)
		}
	}
}

// TestTcpdump parses tcpdump -X and -XX output: header lines skipped,
// offsets and ASCII columns stripped, packets kept apart.
func TestTcpdump(t *testing.T) {
	in := `12:00:00.000001 IP 127.0.0.1.50000 > 127.0.0.1.9092: Flags [P.], seq 1:5, ack 1, win 512, length 4
	0x0000:  4500 002c 0001 0000 4006 0000 7f00 0001  E..,....@.......
	0x0010:  7f00 0001 c350 2384 0000 0001 0000 0001  .....P#.........
	0x0020:  5018 0200 0000 0000 dead beef            P...........
12:00:00.000002 IP 127.0.0.1.50000 > 127.0.0.1.9092: Flags [P.], seq 5:7, ack 1, win 512, length 2
	0x0000:  4500 002a 0002 0000 4006 0000 7f00 0001  E..*....@.......
	0x0010:  7f00 0001 c350 2384 0000 0005 0000 0001  .....P#.........
	0x0020:  5018 0200 0000 0000 cafe                 P.........
`
	d, err := ParseDump(in)
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != FormatDump || len(d.Packets) != 2 || d.Headers != 2 {
		t.Fatalf("format %s, %d packets, %d headers; want dump, 2, 2", d.Format, len(d.Packets), d.Headers)
	}
	if len(d.Packets[0]) != 44 || len(d.Packets[1]) != 42 {
		t.Errorf("packet sizes %d, %d; want 44, 42 (the IPv4 total lengths)", len(d.Packets[0]), len(d.Packets[1]))
	}
	if !bytes.HasSuffix(d.Packets[0], []byte{0xde, 0xad, 0xbe, 0xef}) || !bytes.HasSuffix(d.Packets[1], []byte{0xca, 0xfe}) {
		t.Errorf("payloads not at the packet ends: %x / %x", d.Packets[0], d.Packets[1])
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		in        string
		line, col int
		msg       string
	}{
		{"00 01 0g", 1, 8, "unexpected"},
		{"00 01\n0 02", 2, 1, "odd number"},
		{"", 1, 1, "no hex"},
		{"hello", 1, 1, "unexpected"},
		{"0011 zz", 1, 6, "unexpected"},
		{"00000000: 0001 0203  ....\n00000010: 0405  ..", 2, 1, "offset 0x10 does not follow the 4 bytes"},
		{"00000000: 00zz 0102  ....", 1, 13, "unexpected"},
	} {
		_, err := Parse(c.in)
		var he *Error
		if !errors.As(err, &he) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want an *Error", c.in, err)
			continue
		}
		if he.Line != c.line || he.Col != c.col || !strings.Contains(he.Msg, c.msg) {
			t.Errorf("Parse(%q) = %v; want line %d col %d containing %q", c.in, err, c.line, c.col, c.msg)
		}
	}
}

func TestTcpdumpSegments(t *testing.T) {
	in := `12:00:00.000001 IP 127.0.0.1.50000 > 127.0.0.1.9092: Flags [P.], seq 1:5, ack 1, win 512, length 4
	0x0000:  4500 002c 0001 0000 4006 0000 7f00 0001  E..,....@.......
	0x0010:  7f00 0001 c350 2384 0000 0001 0000 0001  .....P#.........
	0x0020:  5018 0200 0000 0000 dead beef            P...........
`
	d, err := ParseDump(in)
	if err != nil {
		t.Fatal(err)
	}
	segs, ok, err := d.TCPSegments()
	if err != nil || !ok || len(segs) != 1 {
		t.Fatalf("segments %v, ok %v, err %v", segs, ok, err)
	}
	if !bytes.Equal(segs[0].Payload, []byte{0xde, 0xad, 0xbe, 0xef}) || segs[0].Flow() != "127.0.0.1:50000 -> 127.0.0.1:9092" {
		t.Errorf("segment %s %x", segs[0].Flow(), segs[0].Payload)
	}
	// Plain Kafka bytes are not mistaken for packets.
	d, _ = ParseDump("0000000a0012000300000001ffff00")
	if _, ok, _ := d.TCPSegments(); ok {
		t.Error("a Kafka frame was taken for an IP packet")
	}
}

// TestLinkHeaders: the same IPv4 packet behind each link header tcpdump
// -XX can show.
func TestLinkHeaders(t *testing.T) {
	ip, _ := Parse("4500 002c 0001 0000 4006 0000 7f00 0001 7f00 0001 c350 2384 0000 0001 0000 0001 5018 0200 0000 0000 dead beef")
	eth, _ := Parse("0000 0000 0000 0000 0000 0000 0800")
	sll, _ := Parse("0000 0304 0006 0000 0000 0000 0000 0800")
	sll2, _ := Parse("0800 0000 0000 0001 0304 0006 0000 0000 0000 0000")
	for name, hdr := range map[string][]byte{"raw IP": nil, "Ethernet": eth, "Linux cooked": sll, "Linux cooked v2": sll2} {
		d := &Dump{Format: FormatDump, Packets: [][]byte{append(append([]byte(nil), hdr...), ip...)}}
		segs, ok, err := d.TCPSegments()
		if err != nil || !ok || len(segs) != 1 || !bytes.Equal(segs[0].Payload, []byte{0xde, 0xad, 0xbe, 0xef}) {
			t.Errorf("%s: %v %v %v", name, segs, ok, err)
		}
	}
}
