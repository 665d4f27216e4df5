package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/tlsdecrypt"
)

// tinySegments writes a capture of one connection whose client sends n
// one-byte segments, each after a hole of one byte that is never filled
// or acknowledged, in ascending or descending sequence order: every one
// waits in the out-of-order buffer.
func tinySegments(t *testing.T, n int, descending bool) []byte {
	t.Helper()
	buf, c := openCapture(t)
	base := c.Seq(ClientToServer)
	for k := range n {
		if descending {
			k = n - 1 - k
		}
		if err := c.WriteSegment(ClientToServer, t0, base+uint32(2*k+1), []byte{'x'}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestReadTinySegmentsBounded: one-byte segments after holes cost the
// out-of-order buffer a page each, not a byte, so that their bookkeeping
// (a slice header and a time each, ~64 bytes) stays within the buffer's
// budget. With MaxBuffered 256 pages (486 KB), 100,000 such segments
// held some 10 MB of heap before (and, in descending order, took a
// quadratic time to insert); now a connection holds at most 64. The
// bound leaves room for the garbage the read leaves.
func TestReadTinySegmentsBounded(t *testing.T) {
	opts := Options{Known: known(t), MaxBuffered: 256}
	defer debug.SetGCPercent(debug.SetGCPercent(10)) // garbage is not what is measured
	for _, c := range []struct {
		n          int
		descending bool
	}{{100000, false}, {40000, true}} {
		descending := c.descending
		data := tinySegments(t, c.n, descending)
		var st Stats
		var err error
		u := hostile.Measure(func() {
			st, err = Read(bytes.NewReader(data), opts, func(*Event) error { return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Gaps == 0 || st.TCPPackets != int64(c.n+3) {
			t.Fatalf("descending %v: %+v", descending, st)
		}
		if u.Peak > 6<<20 {
			t.Errorf("descending %v: a %d-byte capture of tiny segments peaked at %d bytes of heap", descending, len(data), u.Peak)
		}
	}
}

// withHugeRecord returns capture (a pcap file) with its snap length set
// to 2^32-1 and a record of n bytes (an Ethernet header, then zeros)
// inserted after its first packet.
func withHugeRecord(t *testing.T, capture []byte, n int) []byte {
	t.Helper()
	le := binary.LittleEndian
	out := bytes.Clone(capture[:24])
	le.PutUint32(out[16:20], math.MaxUint32)
	first := 24 + 16 + int(le.Uint32(capture[24+8:]))
	out = append(out, capture[24:first]...)
	var hdr [16]byte
	le.PutUint32(hdr[8:], uint32(n))
	le.PutUint32(hdr[12:], uint32(n))
	out = append(out, hdr[:]...)
	rec := make([]byte, n)
	copy(rec, capture[24+16:24+16+14])
	out = append(out, rec...)
	return append(out, capture[first:]...)
}

// TestReadHugeRecord: a pcap record longer than any packet a capture
// tool takes (a header that lies about its snap length) is skipped
// without being held in memory, counted in Stats.Oversized, and the
// packets after it are read. A 24 MiB record took some 48 MiB of heap
// before (the pcap reader grew a buffer to hold it).
func TestReadHugeRecord(t *testing.T) {
	plain := writeCapture(t, PCAP, sampleExchanges(), true, 0, 0)
	opts := Options{Known: known(t), Verify: verify(t)}
	want, wantSt := readAll(t, plain, opts)
	data := withHugeRecord(t, plain, 24<<20)
	var got []got
	var st Stats
	u := hostile.Measure(func() { got, st = readAll(t, data, opts) })
	if u.Peak > 8<<20 {
		t.Errorf("a %d-byte record took %d bytes of heap", 24<<20, u.Peak)
	}
	if st.Oversized != 1 || st.Packets != wantSt.Packets+1 || len(got) != len(want) {
		t.Errorf("%d frames of %d; %+v", len(got), len(want), st)
	}
}

// ngBlock returns a little-endian pcapng block of type typ around body
// (padded to 32 bits).
func ngBlock(typ uint32, body []byte) []byte {
	le := binary.LittleEndian
	n := 12 + (len(body)+3)&^3
	b := le.AppendUint32(nil, typ)
	b = le.AppendUint32(b, uint32(n))
	b = append(b, body...)
	b = append(b, make([]byte, n-12-len(body))...)
	return le.AppendUint32(b, uint32(n))
}

// withNgBlocks returns capture (a pcapng file of one section and one
// interface, as Writer writes them) with blocks inserted after its
// interface description block.
func withNgBlocks(capture []byte, blocks ...[]byte) []byte {
	le := binary.LittleEndian
	shb := int(le.Uint32(capture[4:]))
	at := shb + int(le.Uint32(capture[shb+4:]))
	out := bytes.Clone(capture[:at])
	for _, b := range blocks {
		out = append(out, b...)
	}
	return append(out, capture[at:]...)
}

// TestReadPcapngHostileBlocks: blocks that pcapgo holds in memory, many
// times their size (an interface description per 20 bytes, name records
// per 12), or a packet block as long as it says, cost a pcapng read no
// more than a few MB: the name resolution blocks and the oversized
// packet are skipped (the packet counted in Stats.Oversized) and the
// packets after them read; a section with more interfaces than
// maxInterfaces is an error naming the limit.
func TestReadPcapngHostileBlocks(t *testing.T) {
	le := binary.LittleEndian
	opts := Options{Known: known(t), Verify: verify(t)}
	plain := writeCapture(t, PCAPNG, sampleExchanges(), true, 0, 0)
	want, wantSt := readAll(t, plain, opts)

	var names []byte
	for range 1 << 19 { // 6 MB of IPv4 records naming "a"
		names = le.AppendUint16(names, 1)
		names = le.AppendUint16(names, 6)
		names = append(names, 10, 0, 0, 1, 'a', 0, 0, 0)
	}
	names = append(names, 0, 0, 0, 0) // end of records
	epb := le.AppendUint32(nil, 0)    // interface 0
	epb = le.AppendUint32(epb, 0)
	epb = le.AppendUint32(epb, 0)
	epb = le.AppendUint32(epb, 24<<20)
	epb = le.AppendUint32(epb, 24<<20)
	epb = append(epb, make([]byte, 24<<20)...)
	data := withNgBlocks(plain, ngBlock(4, names), ngBlock(6, epb))
	var got []got
	var st Stats
	u := hostile.Measure(func() { got, st = readAll(t, data, opts) })
	if u.Total > 8<<20 { // Total: a sample of the heap can miss the packet
		t.Errorf("name records and a packet of 24 MiB allocated %d bytes", u.Total)
	}
	if st.Oversized != 1 || st.Packets != wantSt.Packets+1 || len(got) != len(want) {
		t.Errorf("%d frames of %d; %+v", len(got), len(want), st)
	}

	idb := ngBlock(1, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	data = withNgBlocks(plain, bytes.Repeat(idb, 1<<18)) // 5 MB
	var err error
	u = hostile.Measure(func() {
		_, err = Read(bytes.NewReader(data), opts, func(*Event) error { return nil })
	})
	if u.Peak > 8<<20 {
		t.Errorf("%d interface descriptions took %d bytes of heap", 1<<18, u.Peak)
	}
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d interfaces", maxInterfaces)) {
		t.Errorf("%d interface descriptions: %v", 1<<18, err)
	}
}

// boundaries returns the offsets in a capture written by Writer where a
// file may end cleanly: after the pcap file header and each record, or
// after each pcapng block.
func boundaries(data []byte, f Format) map[int]bool {
	le := binary.LittleEndian
	at := map[int]bool{}
	if f == PCAP {
		for i := 24; i <= len(data); i += 16 + int(le.Uint32(data[i+8:])) {
			at[i] = true
			if i == len(data) {
				break
			}
		}
		return at
	}
	for i := 0; i < len(data); i += int(le.Uint32(data[i+4:])) {
		at[i+int(le.Uint32(data[i+4:]))] = true
	}
	return at
}

// TestReadTruncatedEverywhere reads every prefix of a pcap and a pcapng
// capture: no panic, no more frame bytes than the prefix holds, and an
// error for every prefix that ends inside a record or block.
func TestReadTruncatedEverywhere(t *testing.T) {
	opts := Options{Known: known(t), Verify: verify(t)}
	for _, f := range []Format{PCAP, PCAPNG} {
		data := writeCapture(t, f, sampleExchanges()[:2], true, 0, 0)
		clean := boundaries(data, f)
		for n := range len(data) {
			total := 0
			_, err := Read(bytes.NewReader(data[:n]), opts, func(ev *Event) error {
				total += len(ev.Data)
				return nil
			})
			if total > n {
				t.Fatalf("format %d, %d bytes: %d frame bytes", f, n, total)
			}
			if err == nil && !clean[n] {
				t.Errorf("format %d cut at %d of %d bytes: no error", f, n, len(data))
			}
		}
	}
}

// TestReadOtherLinkType: packets of a link type the reader does not read
// are counted by link type, not as packets whose headers did not decode.
func TestReadOtherLinkType(t *testing.T) {
	data := writeCapture(t, PCAP, sampleExchanges(), true, 0, 0)
	binary.LittleEndian.PutUint32(data[20:], 147) // DLT_USER0
	got, st := readAll(t, data, Options{})
	if len(got) != 0 || st.Undecodable != 0 || st.OtherLinks["link type 147"] != st.Packets || st.Packets == 0 {
		t.Errorf("%d frames; %+v", len(got), st)
	}
}

// TestReadProbeTinySegments: a connection whose start the capture lacks
// is held while it is told TLS or not (with TLS 1.3 secrets in the key
// log); each held packet costs its bytes and some 64 more of
// bookkeeping, which count against the probe's bounds too. 60,000
// one-byte segments were all held (8 MB of heap at the end) before, and
// each searched the bytes held before it for records again; now the
// probe settles after about a thousand.
func TestReadProbeTinySegments(t *testing.T) {
	keys := tlsdecrypt.NewKeyLog()
	line := "CLIENT_TRAFFIC_SECRET_0 " + strings.Repeat("ab", 32) + " " + strings.Repeat("cd", 32) + "\n"
	if err := keys.Read(strings.NewReader(line), "keylog"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(client, server) // not opened: its start is not captured
	for range 60000 {
		if err := c.Write(ClientToServer, t0, []byte{'x'}); err != nil {
			t.Fatal(err)
		}
	}
	data := buf.Bytes()
	defer debug.SetGCPercent(debug.SetGCPercent(10)) // garbage is not what is measured
	opts := Options{Known: known(t), TLSKeys: keys}
	var st Stats
	u := hostile.Measure(func() {
		st, err = Read(bytes.NewReader(data), opts, func(*Event) error { return nil })
	})
	if err != nil || st.TCPPackets != 60000 {
		t.Fatalf("%v; %+v", err, st)
	}
	if u.Peak > 4<<20 {
		t.Errorf("60,000 one-byte segments probed took %d bytes of heap", u.Peak)
	}
}

// TestReadCaptureSecretsBounded: the key logs a pcapng file carries
// (Decryption Secrets Blocks) are read up to maxCaptureSecrets bytes in
// all: a key log costs some 2.4 times its size in memory, and a capture
// could carry any number of blocks. The blocks past the bound are
// counted, not read.
func TestReadCaptureSecretsBounded(t *testing.T) {
	defer func(n int) { maxCaptureSecrets = n }(maxCaptureSecrets)
	maxCaptureSecrets = 1000
	le := binary.LittleEndian
	dsb := func(seed byte) []byte {
		var text []byte
		for i := range 3 {
			text = fmt.Appendf(text, "CLIENT_RANDOM %s %s\n", strings.Repeat(fmt.Sprintf("%02x", seed+byte(i)), 32), strings.Repeat("cd", 48))
		}
		body := le.AppendUint32(nil, 0x544c534b)
		body = le.AppendUint32(body, uint32(len(text)))
		return ngBlock(0x0a, append(body, text...))
	}
	plain := writeCapture(t, PCAPNG, sampleExchanges(), true, 0, 0)
	data := withNgBlocks(plain, dsb(1), dsb(10))
	keys := tlsdecrypt.NewKeyLog()
	_, st := readAll(t, data, Options{Known: known(t), Verify: verify(t), TLSKeys: keys})
	if keys.Sessions() != 3 || st.TLS.KeyLogBlocks != 1 || st.TLS.SecretsSkipped != 1 {
		t.Errorf("%d sessions; %+v", keys.Sessions(), st.TLS)
	}
}

// TestReadOddTimestampResolutions: interfaces of odd timestamp
// resolutions (2^-63, 10^-19, 10^-20, whose unit overflows 64 bits,
// 2^0) and link types (Ethernet, raw IP, one not read), each with a
// packet, after the capture's own: no panic; every packet is counted,
// the frames of the capture's own come out.
func TestReadOddTimestampResolutions(t *testing.T) {
	le := binary.LittleEndian
	opts := Options{Known: known(t), Verify: verify(t)}
	plain := writeCapture(t, PCAPNG, sampleExchanges(), true, 0, 0)
	want, wantSt := readAll(t, plain, opts)
	idb := func(link uint16, tsresol byte) []byte {
		b := le.AppendUint16(nil, link)
		b = append(b, 0, 0, 0, 0, 0, 0)    // reserved, snap length
		b = append(b, 9, 0, 1, 0, tsresol) // if_tsresol
		b = append(b, 0, 0, 0, 0, 0, 0, 0) // padding, end of options
		return ngBlock(1, b)
	}
	epb := func(iface uint32) []byte {
		b := le.AppendUint32(nil, iface)
		b = le.AppendUint32(b, 0xffffffff)
		b = le.AppendUint32(b, 0xffffffff)
		b = le.AppendUint32(b, 20)
		b = le.AppendUint32(b, 20)
		return ngBlock(6, append(b, make([]byte, 20)...))
	}
	blocks := [][]byte{idb(1, 0x80|63), idb(101, 19), idb(101, 20), idb(147, 0x80)}
	for i := range 4 {
		blocks = append(blocks, epb(uint32(i+1)))
	}
	data := withNgBlocks(plain, blocks...)
	got, st := readAll(t, data, opts)
	if len(got) != len(want) || st.Packets != wantSt.Packets+4 || st.OtherLinks["link type 147"] != 1 {
		t.Errorf("%d frames of %d; %+v", len(got), len(want), st)
	}
}

// TestReadSectionsOfBothByteOrders: a pcapng file whose second section
// is big-endian (a section header in the middle, as cat of two captures
// makes), holding the capture's packets again and a packet too long to
// read: every packet of both sections is read, through the guard that
// follows the blocks, and the long one skipped.
func TestReadSectionsOfBothByteOrders(t *testing.T) {
	opts := Options{Known: known(t), Verify: verify(t)}
	plain := writeCapture(t, PCAPNG, sampleExchanges(), true, 0, 0)
	_, wantSt := readAll(t, plain, opts)
	be := binary.BigEndian
	block := func(typ uint32, body []byte) []byte {
		n := 12 + (len(body)+3)&^3
		b := be.AppendUint32(nil, typ)
		b = be.AppendUint32(b, uint32(n))
		b = append(b, body...)
		b = append(b, make([]byte, n-12-len(body))...)
		return be.AppendUint32(b, uint32(n))
	}
	// The little-endian capture's blocks, rewritten big-endian.
	le := binary.LittleEndian
	second := block(ngSHB, be.AppendUint64(be.AppendUint32(be.AppendUint32(nil, 0x1a2b3c4d), 1<<16), math.MaxUint64))
	second = append(second, block(ngIDB, be.AppendUint32(be.AppendUint32(nil, 1<<16), 0))...)
	shb := int(le.Uint32(plain[4:]))
	idb := shb + int(le.Uint32(plain[shb+4:]))
	packets := 0
	for at := idb; at < len(plain); at += int(le.Uint32(plain[at+4:])) {
		if le.Uint32(plain[at:]) != ngEPB {
			continue
		}
		body := plain[at+8:]
		var b []byte
		for k := range 5 {
			b = be.AppendUint32(b, le.Uint32(body[4*k:]))
		}
		second = append(second, block(ngEPB, append(b, body[20:20+le.Uint32(body[12:])]...))...)
		packets++
	}
	// And a packet too long to read, which the guard must find.
	long := be.AppendUint32(make([]byte, 12), MaxPacket+1)
	long = be.AppendUint32(long, MaxPacket+1)
	second = append(second, block(ngEPB, append(long, make([]byte, MaxPacket+1)...))...)
	data := append(bytes.Clone(plain), second...)
	got, st := readAll(t, data, opts)
	if st.Packets != 2*wantSt.Packets+1 || st.Oversized != 1 || packets != int(wantSt.Packets) || st.Undecodable != 0 || len(got) == 0 {
		t.Errorf("%d packets rewritten, %d frames; %+v", packets, len(got), st)
	}
}

// TestReadPcapngCapturedLengthLies: an enhanced packet block whose
// captured length (1 GiB) passes MaxPacket and its block is skipped by
// its block's length and counted, and the packets after it are read
// (pcapgo took the rest of the file for its data, holding all of it in
// memory, and reported the file malformed).
func TestReadPcapngCapturedLengthLies(t *testing.T) {
	le := binary.LittleEndian
	opts := Options{Known: known(t), Verify: verify(t)}
	plain := writeCapture(t, PCAPNG, sampleExchanges(), true, 0, 0)
	want, wantSt := readAll(t, plain, opts)
	epb := le.AppendUint32(make([]byte, 12), 1<<30)
	epb = le.AppendUint32(epb, 1<<30)
	got, st := readAll(t, withNgBlocks(plain, ngBlock(6, append(epb, make([]byte, 40)...))), opts)
	if st.Oversized != 1 || st.Packets != wantSt.Packets+1 || len(got) != len(want) {
		t.Errorf("%d frames of %d; %+v", len(got), len(want), st)
	}
}
