package hexin

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// dumpInput is the bytes every dump shape test dumps: a frame-like head,
// a run of zeros long enough for every tool to squeeze ("*"), and an odd
// tail (so hexdump pads its last 16-bit word).
func dumpInput() []byte {
	b := []byte{0, 0, 0, 0x15, 0, 0x21, 0, 2}
	b = append(b, make([]byte, 100)...)
	return append(b, 'a', 'b', 'c', 1, 2)
}

// toolDump runs a dump tool on the input when it is installed; ok is false
// when it is not.
func toolDump(t *testing.T, data []byte, tool string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		return "", false
	}
	path := filepath.Join(t.TempDir(), "in.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, append(args, path)...).Output()
	if err != nil {
		t.Fatalf("%s %q: %v", tool, args, err)
	}
	return string(out), true
}

// TestDumpShapes parses every dump shape, each from the real tool's
// output when the tool is installed and always from a sample the tool
// wrote (testdata/dumps), and checks the bytes.
func TestDumpShapes(t *testing.T) {
	data := dumpInput()
	cases := []struct {
		name, sample string
		tool         string
		args         []string
		want         []byte
		squeezed     bool // the dump has a "*" line
		edit         func(string) string
	}{
		{"hexdump -C", "hexdump-C.txt", "hexdump", []string{"-C"}, data, true, nil},
		{"hexdump", "hexdump.txt", "hexdump", nil, data, true, nil},
		{"od -A x -t x1", "od-x1.txt", "od", []string{"-A", "x", "-t", "x1"}, data, true, nil},
		{"od -A x -t x1z", "od-x1z.txt", "od", []string{"-A", "x", "-t", "x1z"}, data, true, nil},
		{"xxd -a", "xxd-a.txt", "xxd", []string{"-a"}, data, true, nil},
		{"xxd -s 4", "xxd-s4.txt", "xxd", []string{"-s", "4"}, data[4:], false, nil},
		{"hexdump -C -s 4", "hexdump-C-s4.txt", "hexdump", []string{"-C", "-s", "4"}, data[4:], true, nil},
		{"CRLF", "hexdump-C.txt", "hexdump", []string{"-C"}, data, true, func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
		{"BOM", "xxd-a.txt", "xxd", []string{"-a"}, data, true, func(s string) string { return "\uFEFF" + s }},
		{"BOM and CRLF", "od-x1.txt", "od", []string{"-A", "x", "-t", "x1"}, data, true, func(s string) string { return "\uFEFF" + strings.ReplaceAll(s, "\n", "\r\n") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sample, err := os.ReadFile(filepath.Join("testdata", "dumps", c.sample))
			if err != nil {
				t.Fatal(err)
			}
			inputs := map[string]string{"sample " + c.sample: string(sample)}
			if out, ok := toolDump(t, data, c.tool, c.args...); ok {
				inputs[c.tool+" output"] = out
			} else {
				t.Logf("%s not installed: the checked-in sample only", c.tool)
			}
			for from, in := range inputs {
				if c.squeezed != strings.Contains(in, "\n*\n") {
					t.Fatalf("%s: squeezed %v, want %v:\n%s", from, !c.squeezed, c.squeezed, in)
				}
				if c.edit != nil {
					in = c.edit(in)
				}
				d, err := ParseDump(in)
				if err != nil {
					t.Fatalf("%s: %v\n%s", from, err, in)
				}
				if got := d.Bytes(); !bytes.Equal(got, c.want) {
					t.Errorf("%s: got %d bytes %x\nwant %d bytes %x", from, len(got), got, len(c.want), c.want)
				}
				if c.want[0] != data[0] && d.Start != 4 {
					t.Errorf("%s: start %d, want 4", from, d.Start)
				}
			}
		})
	}
}

// TestSqueezeErrors: a "*" that cannot be expanded is an error naming the
// line, and a "*" may not stand for more than MaxSqueezed bytes.
func TestSqueezeErrors(t *testing.T) {
	cases := map[string]string{
		"star first":         "*\n00000010  00 00\n",
		"star last":          "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n*\n",
		"not whole lines":    "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n*\n00000015  01\n",
		"huge":               "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n*\n7ffffff0  01\n",
		"end after the data": "00000000  00 01  |..|\n00000004\n",
	}
	for name, in := range cases {
		_, err := ParseDump(in)
		var e *Error
		if err == nil || !asError(err, &e) || e.Line < 1 {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

// writeSplitFrame writes a capture of one Kafka frame sent in two TCP
// segments, so that tshark's Kafka dissector reassembles it.
func writeSplitFrame(t *testing.T, path string, frame []byte, cut int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	seq := uint32(1000)
	for i, p := range [][]byte{frame[:cut], frame[cut:]} {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
		tcp := &layers.TCP{SrcPort: 50000, DstPort: 9092, Seq: seq, PSH: true, ACK: true, Window: 512}
		seq += uint32(len(p))
		_ = tcp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(p)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000+int64(i), 0), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		if err := w.WritePacket(ci, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTsharkReassembled: tshark -x prints a frame split over two segments
// as the two packets plus a "Reassembled TCP" block; the payload is the
// frame once (the reassembled bytes), not twice.
func TestTsharkReassembled(t *testing.T) {
	// An ApiVersions v3 request: client id "abcd", software name "name", version "1".
	frame := []byte{0, 0, 0, 30, 0, 18, 0, 3, 0, 0, 0, 7, 0, 4, 'a', 'b', 'c', 'd', 0, 4, 'n', 'a', 'm', 'e', 2, '1', 0, 0, 0, 0, 0, 0, 0, 0}
	sample, err := os.ReadFile(filepath.Join("testdata", "dumps", "tshark-reassembled.txt"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"sample": string(sample)}
	if _, err := exec.LookPath("tshark"); err == nil {
		path := filepath.Join(t.TempDir(), "split.pcap")
		writeSplitFrame(t, path, frame, 10)
		out, err := exec.Command("tshark", "-r", path, "-x").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		inputs["tshark output"] = string(out)
	} else {
		t.Log("tshark not installed: the checked-in sample only")
	}
	for from, in := range inputs {
		if !strings.Contains(in, "Reassembled TCP (34 bytes):") {
			t.Fatalf("%s has no reassembled block:\n%s", from, in)
		}
		d, err := ParseDump(in)
		if err != nil {
			t.Fatalf("%s: %v", from, err)
		}
		segs, ok, err := d.TCPSegments()
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, err %v", from, ok, err)
		}
		var got []byte
		for _, s := range segs {
			got = append(got, s.Payload...)
		}
		if !bytes.Equal(got, frame) {
			t.Errorf("%s: payload %x\nwant %x", from, got, frame)
		}
	}
}

// TestWindowsDumps: the dumps Windows' own tools write, CRLF line ends
// and all: certutil -encodehex (a tab after a four-digit offset, the
// ASCII column after three spaces) and PowerShell 5's Format-Hex (a
// column header line, then offset lines). Neither tool runs here; the
// samples are their documented shapes, written out by hand.
func TestWindowsDumps(t *testing.T) {
	want, _ := hex.DecodeString("0000001a0012000300000000000a6d616e69666573746572000261023100")
	for name, in := range map[string]string{
		"certutil -encodehex": "0000\t00 00 00 1a 00 12 00 03  00 00 00 00 00 0a 6d 61   ..............ma\r\n" +
			"0010\t6e 69 66 65 73 74 65 72  00 02 61 02 31 00         nifester..a.1.\r\n",
		"certutil -encodehex, hex-looking ASCII": "0000\t00 00 00 1a 00 12 00 03  00 00 00 00 00 0a 6d 61   ..............ma\r\n" +
			"0010\t6e 69 66 65 73 74 65 72  00 02 61 02 31 00         ab cd 12 34 ef\r\n",
		"Format-Hex": "\r\n\r\n           00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F\r\n\r\n" +
			"00000000   00 00 00 1A 00 12 00 03 00 00 00 00 00 0A 6D 61  ..............ma\r\n" +
			"00000010   6E 69 66 65 73 74 65 72 00 02 61 02 31 00        nifester..a.1.\r\n\r\n",
		// PowerShell 7 (6.2 and later): a label, a three-line column
		// header, 16-digit offsets followed by one space; control bytes
		// show as U+FFFD in the ASCII column and NUL as a space.
		"Format-Hex, PowerShell 7": "   Label: C:\\Test\\frame.bin\r\n\r\n" + ps7Header +
			"0000000000000000 00 00 00 1A 00 12 00 03 00 00 00 00 00 0A 6D 61    \uFFFD \uFFFD \uFFFD          ma\r\n" +
			"0000000000000010 6E 69 66 65 73 74 65 72 00 02 61 02 31 00       nifester \uFFFDa\uFFFD1 \r\n\r\n",
	} {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %x, want %x", name, got, want)
		}
	}
	// Plain hex in tab-separated groups is not taken for a dump whose
	// first group is an offset.
	plain := "0000001a\t00120003\t00000000\t000a6d61\t6e696665\t73746572\t00026102\t3100\r\n"
	if got, err := Parse(plain); err != nil || !bytes.Equal(got, want) {
		t.Errorf("tab-separated groups: got %x, %v; want %x", got, err, want)
	}
}

// ps7Header is the column header PowerShell 7's Format-Hex writes under
// each label.
const ps7Header = "          Offset Bytes                                           Ascii\r\n" +
	"                 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F\r\n" +
	"          ------ ----------------------------------------------- -----\r\n"

// TestPowerShell7FormatHex: the shapes of PowerShell 7's Format-Hex
// beyond one short file: a full line whose ASCII column, one space after
// the last byte, looks like hex; two labelled blocks (two objects piped
// in) read as two packets; and plain hex in groups of sixteen digits,
// which is no dump.
func TestPowerShell7FormatHex(t *testing.T) {
	// The first line's bytes are the text "ab cd 12 34 ef 5", which
	// Format-Hex writes in the ASCII column right after them.
	want, _ := hex.DecodeString("61622063642031322033342065662035" + "0102")
	in := "   Label: C:\\Test\\a.bin\r\n\r\n" + ps7Header +
		"0000000000000000 61 62 20 63 64 20 31 32 20 33 34 20 65 66 20 35 ab cd 12 34 ef 5\r\n" +
		"0000000000000010 01 02                                           \uFFFD\uFFFD\r\n"
	if got, err := Parse(in); err != nil || !bytes.Equal(got, want) {
		t.Errorf("full line, hex-looking ASCII: got %x, %v; want %x", got, err, want)
	}

	two := "   Label: String (System.String) <2944BEC3>\r\n\r\n" + ps7Header +
		"0000000000000000 61 62 63                                        abc\r\n\r\n" +
		"   Label: Int32 (System.Int32) <2EB933C5>\r\n\r\n" + ps7Header +
		"0000000000000000 01 00 00 00                                     \uFFFD   \r\n"
	d, err := ParseDump(two)
	if err != nil {
		t.Fatalf("two blocks: %v", err)
	}
	if len(d.Packets) != 2 || string(d.Packets[0]) != "abc" || !bytes.Equal(d.Packets[1], []byte{1, 0, 0, 0}) {
		t.Errorf("two blocks: packets %x, want [616263 01000000]", d.Packets)
	}
	if d.Headers != 8 {
		t.Errorf("two blocks: %d header lines skipped, want 8 (a label and three header lines each)", d.Headers)
	}

	plain := "0000001a00120003 00000000000a6d61 6e69666573746572 0002610231 00"
	wantPlain, _ := hex.DecodeString("0000001a0012000300000000000a6d616e69666573746572000261023100")
	if got, err := Parse(plain); err != nil || !bytes.Equal(got, wantPlain) {
		t.Errorf("groups of sixteen digits: got %x, %v; want %x", got, err, wantPlain)
	}
}

// TestSqueezedInAll: the "*" lines of one input stand for at most
// MaxSqueezed bytes in all, not each: 20 of them, each 64 MiB, in a dump
// of 1.7 KB used to expand to over a gigabyte (and took 24 GB of memory
// before the process was killed). ParseDumpMax takes a lower bound; the
// error names the line where the "*" that passes it ends.
func TestSqueezedInAll(t *testing.T) {
	dump := func(stars int, each int64) string {
		var b strings.Builder
		off := int64(0)
		for range stars {
			fmt.Fprintf(&b, "%08x  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n", off)
			off += each
		}
		fmt.Fprintf(&b, "%08x  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n%08x\n", off, off+16)
		return b.String()
	}
	in := dump(20, MaxSqueezed)
	_, err := ParseDump(in)
	var e *Error
	if err == nil || !asError(err, &e) || e.Line != 5 || !strings.Contains(e.Msg, "with the input's other") {
		t.Fatalf("20 stars of 64 MiB each in %d bytes: %v; want an error at line 5, where the second star ends", len(in), err)
	}
	// Within the bound in all: read.
	d, err := ParseDump(dump(4, 16<<20))
	if err != nil || len(d.Bytes()) != 4*16<<20+16 {
		t.Fatalf("4 stars of 16 MiB: %v", err)
	}
	// A lower bound, as the server uses.
	if _, err := ParseDumpMax(dump(4, 16<<10), 32<<10); err == nil || !asError(err, &e) || e.Line != 7 {
		t.Errorf("4 stars of 16 KiB, 32 KiB allowed: %v; want an error at line 7, where the third star ends", err)
	}
	if b, err := ParseMax(dump(2, 16<<10), 32<<10); err != nil || len(b) != 2*16<<10+16 {
		t.Errorf("2 stars of 16 KiB, 32 KiB allowed: %d bytes, %v", len(b), err)
	}
}
