package ngsecrets_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/ngsecrets"
	"github.com/manifester/manifester/internal/tlstest"
)

// tool returns the path of one of Wireshark's programs (tlstest.Tool:
// missing is a skip locally and a failure in CI, which installs them).
func tool(t *testing.T, name string) string { t.Helper(); return tlstest.Tool(t, name) }

// run runs a program and returns its standard output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, se.String())
	}
	return so.String()
}

// randHex returns n random bytes in hex.
func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// keylogs returns two key logs of random secrets: TLS 1.2 master secrets,
// and TLS 1.3 traffic secrets with a comment line. Their lengths are not
// multiples of 4, so that editcap pads them.
func keylogs(t *testing.T) [2]string {
	t.Helper()
	var k12, k13 strings.Builder
	for range 3 {
		fmt.Fprintf(&k12, "CLIENT_RANDOM %s %s\n", randHex(t, 32), randHex(t, 48))
	}
	k13.WriteString("# TLS 1.3\n")
	random := randHex(t, 32)
	for _, label := range []string{"CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"} {
		fmt.Fprintf(&k13, "%s %s %s\n", label, random, randHex(t, 32))
	}
	ks := [2]string{k12.String(), k13.String()}
	for i := range ks {
		for len(ks[i])%4 != 3 {
			ks[i] = "#" + ks[i]
		}
	}
	return ks
}

// kafkaCapture writes a capture of one Kafka connection: an ApiVersions
// request and its response, each twice; it returns the file and its
// number of packets.
func kafkaCapture(t *testing.T, f capture.Format) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	at := time.Unix(1700000000, 0)
	if err := c.Open(at); err != nil {
		t.Fatal(err)
	}
	for id := int32(1); id <= 2; id++ {
		// ApiVersions v0: key 18, version 0, correlation id, null client id.
		req := sized(t, int16(18), int16(0), id, int16(-1))
		// Its response: correlation id, error code 0, no API keys.
		resp := sized(t, id, int16(0), int32(0))
		if err := c.Write(capture.ClientToServer, at, req); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(capture.ServerToClient, at, resp); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Packets()
}

// sized encodes fields big-endian behind their int32 size.
func sized(t *testing.T, fields ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, v := range fields {
		if err := binary.Write(&b, binary.BigEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(b.Len())), b.Bytes()...)
}

// readCapture reads a capture with the project's reader and returns its
// packet count and frames.
func readCapture(t *testing.T, data []byte) (int64, []string) {
	t.Helper()
	var frames []string
	st, err := capture.Read(bytes.NewReader(data), capture.Options{Known: func(k, v int16) bool { return true }},
		func(ev *capture.Event) error {
			frames = append(frames, fmt.Sprintf("%v % x", ev.Dir, ev.Data))
			return nil
		})
	if err != nil {
		t.Fatalf("capture.Read: %v", err)
	}
	return st.Packets, frames
}

// tsharkPackets counts the packets tshark reads in a file.
func tsharkPackets(t *testing.T, path string) int {
	t.Helper()
	out := run(t, tool(t, "tshark"), "-n", "-r", path, "-T", "fields", "-e", "frame.number")
	return strings.Count(out, "\n")
}

// TestEditcapSecrets: Wireshark's editcap, an independent producer,
// injects two key logs into a capture the project's writer made; ngsecrets.Sniff,
// whatever the size of the reads, yields the file's bytes unchanged and
// calls fn once per key log, in order, with ngsecrets.TypeTLSKeyLog and the key
// log's bytes exactly; the file as editcap wrote it has the layout the
// format says (secrets length the key log's, zero padding, no options);
// and the project's capture reader and tshark still read its packets.
func TestEditcapSecrets(t *testing.T) {
	editcap := tool(t, "editcap")
	dir := t.TempDir()
	keys := keylogs(t)
	var keyPaths []string
	for i, k := range keys {
		p := filepath.Join(dir, fmt.Sprintf("keys%d.log", i))
		if err := os.WriteFile(p, []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		keyPaths = append(keyPaths, p)
	}
	for _, format := range []struct {
		name string
		f    capture.Format
	}{{"pcap", capture.PCAP}, {"pcapng", capture.PCAPNG}} {
		t.Run(format.name, func(t *testing.T) {
			in, packets := kafkaCapture(t, format.f)
			inPath := filepath.Join(dir, "in."+format.name)
			if err := os.WriteFile(inPath, in, 0o644); err != nil {
				t.Fatal(err)
			}
			outPath := filepath.Join(dir, "out-"+format.name+".pcapng")
			run(t, editcap, "--inject-secrets", "tls,"+keyPaths[0], "--inject-secrets", "tls,"+keyPaths[1], inPath, outPath)
			file, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatal(err)
			}
			want := []call{{ngsecrets.TypeTLSKeyLog, keys[0]}, {ngsecrets.TypeTLSKeyLog, keys[1]}}
			checkDSBLayout(t, file, keys[:])
			for _, rd := range readers {
				out, calls, r, err := sniffAll(rd.wrap(file), 0)
				if err != nil || !bytes.Equal(out, file) || r.Err() != nil {
					t.Errorf("%s: copy error %v, bytes equal %v, Err() %v", rd.name, err, bytes.Equal(out, file), r.Err())
				}
				if !slices.Equal(calls, want) {
					t.Errorf("%s: calls\n got %v\nwant %v", rd.name, calls, want)
				}
			}

			// The secrets confuse no reader: ours reads the same packets and
			// frames as in the file without them, tshark the same packets.
			wantPackets, wantFrames := readCapture(t, in)
			if wantPackets != int64(packets) || len(wantFrames) != 4 {
				t.Fatalf("capture without secrets: %d packets (%d written), frames %q", wantPackets, packets, wantFrames)
			}
			gotPackets, gotFrames := readCapture(t, file)
			if gotPackets != wantPackets || !slices.Equal(gotFrames, wantFrames) {
				t.Errorf("capture with secrets: %d packets, frames %q; want %d, %q", gotPackets, gotFrames, wantPackets, wantFrames)
			}
			if n := tsharkPackets(t, outPath); n != packets {
				t.Errorf("tshark reads %d packets, want %d", n, packets)
			}
		})
	}
}

// checkDSBLayout finds each key log in an editcap output by its bytes,
// without the Reader, and checks the DSB around it: a little-endian DSB
// of type TLSK whose secrets length is the key log's, zero padding to 32
// bits, no options, and the trailing length.
func checkDSBLayout(t *testing.T, file []byte, keys []string) {
	t.Helper()
	le := binary.LittleEndian
	for i, k := range keys {
		at := bytes.Index(file, []byte(k))
		if at < 16 {
			t.Errorf("key log %d not found in the file", i)
			continue
		}
		h := file[at-16 : at]
		total := 20 + pad4(len(k))
		if le.Uint32(h[0:]) != 0xA || le.Uint32(h[4:]) != uint32(total) || le.Uint32(h[8:]) != ngsecrets.TypeTLSKeyLog || le.Uint32(h[12:]) != uint32(len(k)) {
			t.Errorf("key log %d: DSB header % x, want type 0xA, total %d, TLSK, length %d", i, h, total, len(k))
			continue
		}
		end := at - 16 + total
		if !bytes.Equal(file[at+len(k):end-4], make([]byte, pad4(len(k))-len(k))) || le.Uint32(file[end-4:]) != uint32(total) {
			t.Errorf("key log %d: padding and trailer % x", i, file[at+len(k):end])
		}
	}
}

// TestEditcapSections: two files editcap wrote, one after the other, make
// one file of two sections (tshark and our capture reader read both);
// ngsecrets.Sniff reports each section's key log, in order.
func TestEditcapSections(t *testing.T) {
	editcap := tool(t, "editcap")
	dir := t.TempDir()
	keys := keylogs(t)
	in, packets := kafkaCapture(t, capture.PCAP)
	inPath := filepath.Join(dir, "in.pcap")
	if err := os.WriteFile(inPath, in, 0o644); err != nil {
		t.Fatal(err)
	}
	var file []byte
	for i, k := range keys {
		keyPath := filepath.Join(dir, fmt.Sprintf("keys%d.log", i))
		outPath := filepath.Join(dir, fmt.Sprintf("out%d.pcapng", i))
		if err := os.WriteFile(keyPath, []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, editcap, "--inject-secrets", "tls,"+keyPath, inPath, outPath)
		b, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		file = append(file, b...)
	}
	path := filepath.Join(dir, "two.pcapng")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	want := []call{{ngsecrets.TypeTLSKeyLog, keys[0]}, {ngsecrets.TypeTLSKeyLog, keys[1]}}
	for _, rd := range readers {
		out, calls, r, err := sniffAll(rd.wrap(file), 0)
		if err != nil || !bytes.Equal(out, file) || r.Err() != nil || !slices.Equal(calls, want) {
			t.Errorf("%s: copy error %v, bytes equal %v, Err() %v, calls\n got %v\nwant %v",
				rd.name, err, bytes.Equal(out, file), r.Err(), calls, want)
		}
	}
	if n, _ := readCapture(t, file); n != int64(2*packets) {
		t.Errorf("capture.Read reads %d packets, want %d", n, 2*packets)
	}
	if n := tsharkPackets(t, path); n != 2*packets {
		t.Errorf("tshark reads %d packets, want %d", n, 2*packets)
	}
}

// TestHandBuiltThroughTshark: tshark, an independent reader, takes the
// hand-built files the other tests use for pcapng with DSBs: it reads
// their packets and exports the TLS master secrets of their key logs (in
// both byte orders), so those tests test the real format.
func TestHandBuiltThroughTshark(t *testing.T) {
	tshark := tool(t, "tshark")
	dir := t.TempDir()
	f := sample()
	path := filepath.Join(dir, "sample.pcapng")
	if err := os.WriteFile(path, f.buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := tsharkPackets(t, path); n != 4 {
		t.Errorf("tshark reads %d packets, want 4", n)
	}
	for name, order := range map[string]byteOrder{"little-endian": binary.LittleEndian, "big-endian": binary.BigEndian} {
		line := fmt.Sprintf("CLIENT_RANDOM %s %s\n", randHex(t, 32), randHex(t, 48))
		g := (&ngFile{}).section(order).secrets(ngsecrets.TypeWireGuard, "not TLS\n", "").
			secrets(ngsecrets.TypeTLSKeyLog, line, "with a comment").packet(frame(1))
		in := filepath.Join(dir, name+".pcapng")
		keys := filepath.Join(dir, name+".keys")
		if err := os.WriteFile(in, g.buf, 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, tshark, "-n", "-q", "-r", in, "--export-tls-session-keys", keys)
		got, err := os.ReadFile(keys)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(got)) != strings.TrimSpace(line) {
			t.Errorf("%s: tshark exports %q, want %q", name, got, line)
		}
		_, calls, _, _ := sniffAll(iotest.HalfReader(bytes.NewReader(g.buf)), 0)
		if !slices.Equal(calls, g.calls()) {
			t.Errorf("%s: calls %v, want %v", name, calls, g.calls())
		}
	}
}
