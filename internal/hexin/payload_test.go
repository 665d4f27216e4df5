package hexin

import (
	"bytes"
	"strings"
	"testing"
)

// packet is an IPv4 TCP packet from 127.0.0.1:ports[0] to ports[1] with
// the given 4-byte payload (or none), as hex.
func packet(ports, payload string) string {
	length := "002c"
	if payload == "" {
		length = "0028"
	}
	return "4500 " + length + " 0001 0000 4006 0000 7f00 0001 7f00 0001 " + ports + " 0000 0001 0000 0001 5018 0200 0000 0000 " + payload
}

const (
	toServer = "c350 2384" // 50000 -> 9092
	toClient = "2384 c350"
)

func dumpOf(t *testing.T, packets ...string) *Dump {
	t.Helper()
	d := &Dump{Format: FormatDump}
	for _, p := range packets {
		b, err := Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		d.Packets = append(d.Packets, b)
	}
	return d
}

func TestPayloadJoinsOneDirection(t *testing.T) {
	got, err := dumpOf(t, packet(toServer, "0000 0001"), packet(toServer, ""), packet(toServer, "0203 0405")).Payload()
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 1, 2, 3, 4, 5}; !bytes.Equal(got, want) {
		t.Errorf("payload % x, want % x", got, want)
	}
}

func TestPayloadErrors(t *testing.T) {
	_, err := dumpOf(t, packet(toServer, "0000 0001"), packet(toClient, "0203 0405")).Payload()
	if err == nil || !strings.Contains(err.Error(), "more than one direction (127.0.0.1:50000 -> 127.0.0.1:9092 and 127.0.0.1:9092 -> 127.0.0.1:50000)") {
		t.Errorf("two directions: %v", err)
	}
	_, err = dumpOf(t, packet(toServer, ""), packet(toClient, "")).Payload()
	if err == nil || err.Error() != "the dump's packets carry no TCP payload" {
		t.Errorf("no payload: %v", err)
	}
	// The second packet's TCP header is cut short.
	cut := dumpOf(t, packet(toServer, "0000 0001"), packet(toServer, "0000 0001"))
	cut.Packets[1] = cut.Packets[1][:24]
	_, err = cut.Payload()
	if err == nil || !strings.HasPrefix(err.Error(), "reading the dump's packets: packet 1: ") {
		t.Errorf("cut header: %v", err)
	}
}

// TestInput: raw bytes pass as they are; hex text is parsed, and a dump
// of packets gives its payload.
func TestInput(t *testing.T) {
	raw := []byte{0, 0, 0, 4, 0xde, 0xad, 0xbe, 0xef}
	if got, err := Input(raw); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("raw: % x, %v", got, err)
	}
	if got, err := Input([]byte("00000004 deadbeef\n")); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("hex text: % x, %v", got, err)
	}
	tcpdump := `12:00:00.000001 IP 127.0.0.1.50000 > 127.0.0.1.9092: Flags [P.], seq 1:5, ack 1, win 512, length 4
	0x0000:  4500 002c 0001 0000 4006 0000 7f00 0001  E..,....@.......
	0x0010:  7f00 0001 c350 2384 0000 0001 0000 0001  .....P#.........
	0x0020:  5018 0200 0000 0000 dead beef            P...........
`
	if got, err := Input([]byte(tcpdump)); err != nil || !bytes.Equal(got, raw[4:]) {
		t.Errorf("tcpdump -X: % x, %v", got, err)
	}
	// A program's print of bytes holding UTF-8 is text too; binary that
	// is not valid UTF-8 stays binary.
	if got, err := Input([]byte("\"\\x00\\x00\\x00\\x04\u00e9t\u00e9\"\n")); err != nil || !bytes.Equal(got, []byte("\x00\x00\x00\x04\u00e9t\u00e9")) {
		t.Errorf("Go %%q with UTF-8: % x, %v", got, err)
	}
	if got, err := Input([]byte("\"\xff\"")); err != nil || !bytes.Equal(got, []byte("\"\xff\"")) {
		t.Errorf("quoted binary: % x, %v", got, err)
	}
	if _, err := TextInput("00 0g"); err == nil {
		t.Error("bad hex: no error")
	}
	// A dump whose ASCII column shows bytes above 0x7f as a code page's
	// letters (a hex editor's copy, saved as UTF-8) is text, in xxd's
	// layout and in hexdump -C's.
	frame := []byte{0, 0, 0, 8, 0xe9, 0x74, 0xe9, 0x20, 0xc0, 0x21, 0xff, 0x7f}
	for name, dump := range map[string]string{
		"xxd":         "00000000: 0000 0008 e974 e920 c021 ff7f            ....été À!ÿ.\n",
		"hexdump -C":  "00000000  00 00 00 08 e9 74 e9 20  c0 21 ff 7f              |....été À!ÿ.|\n0000000c\n",
		"CRLF, UTF-8": "0000  00 00 00 08 e9 74 e9 20 c0 21 ff 7f   ....été À!ÿ.\r\n",
	} {
		if got, err := Input([]byte(dump)); err != nil || !bytes.Equal(got, frame) {
			t.Errorf("%s with UTF-8 in its ASCII column: % x, %v", name, got, err)
		}
	}
	// Text with a character beyond ASCII where a hex digit belongs (a
	// no-break space pasted from a web page) is an error at its place,
	// not binary.
	if _, err := Input([]byte("00 00 00 04\n00\u00a001 02 03\n")); err == nil || !strings.Contains(err.Error(), "line 2, column 3") {
		t.Errorf("a no-break space in the hex: %v", err)
	}
	// The frame itself is binary: its zeros are control characters.
	if got, err := Input(frame); err != nil || !bytes.Equal(got, frame) {
		t.Errorf("binary frame: % x, %v", got, err)
	}
}
