package ngsecrets_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/ngsecrets"
)

const keylogLine = "CLIENT_RANDOM 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0 " +
	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"

// sample is a file of three sections in alternating byte orders, with
// DSBs of every padding, a non-TLS secrets type, an empty one, options,
// and packets between them.
func sample() *ngFile {
	f := &ngFile{}
	f.section(binary.LittleEndian).
		secrets(ngsecrets.TypeTLSKeyLog, keylogLine, "").
		secrets(ngsecrets.TypeTLSKeyLog, "a", "one byte").
		packet(frame(1)).
		secrets(ngsecrets.TypeWireGuard, "LOCAL_STATIC_PRIVATE_KEY = QUJD\n", "").
		packet(frame(2))
	f.section(binary.BigEndian).
		secrets(ngsecrets.TypeTLSKeyLog, "ab", "").
		packet(frame(3)).
		secrets(0x5353484b, "abc", "SSH, three bytes"). // SSHK
		secrets(ngsecrets.TypeTLSKeyLog, "", "")
	f.section(binary.LittleEndian).
		packet(frame(4)).
		secrets(ngsecrets.TypeTLSKeyLog, keylogLine+keylogLine, "two lines")
	return f
}

// TestSniffHandBuilt: every DSB of a file of several sections, in both
// byte orders, is handed to fn with its type and its secrets exactly (no
// padding, no options), in file order, whatever the size of the reads,
// and the bytes pass unchanged.
func TestSniffHandBuilt(t *testing.T) {
	f := sample()
	if len(f.dsbs) != 7 {
		t.Fatalf("sample has %d DSBs", len(f.dsbs))
	}
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			out, calls, r, err := sniffAll(rd.wrap(f.buf), 0)
			if err != nil {
				t.Fatalf("io.Copy: %v", err)
			}
			if !bytes.Equal(out, f.buf) {
				t.Errorf("bytes out differ from bytes in (%d, %d bytes)", len(out), len(f.buf))
			}
			if !slices.Equal(calls, f.calls()) {
				t.Errorf("calls:\n got %v\nwant %v", calls, f.calls())
			}
			if r.Err() != nil {
				t.Errorf("Err() = %v", r.Err())
			}
		})
	}
}

// TestSniffCallTime: fn is called for a DSB when its last byte is being
// yielded and not before: a reader asking for one byte at a time has been
// given exactly the bytes of the file up to that last one.
func TestSniffCallTime(t *testing.T) {
	f := sample()
	yielded := 0
	var at []int
	r := ngsecrets.Sniff(bytes.NewReader(f.buf), func(uint32, []byte) error {
		at = append(at, yielded)
		return nil
	})
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		yielded += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []int
	for _, d := range f.dsbs {
		want = append(want, d.end-1)
	}
	if !slices.Equal(at, want) {
		t.Errorf("fn called after %v bytes yielded, want %v", at, want)
	}
}

// TestSniffReaderContract: the Reader is a well-behaved io.Reader.
func TestSniffReaderContract(t *testing.T) {
	f := sample()
	if err := iotest.TestReader(ngsecrets.Sniff(bytes.NewReader(f.buf), nil), f.buf); err != nil {
		t.Error(err)
	}
}

// TestSniffNotPcapng: a classic pcap, other bytes, a file too short to
// tell, and a section header type without its byte-order magic pass
// through untouched, fn is never called and no error is reported.
func TestSniffNotPcapng(t *testing.T) {
	var pcap bytes.Buffer
	w, err := capture.NewWriter(&pcap, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	if err := c.Open(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	// A payload that holds a pcapng file: it is a packet's data, not a block.
	if err := c.Write(capture.ClientToServer, time.Unix(2, 0), sample().buf); err != nil {
		t.Fatal(err)
	}
	noMagic := slices.Clone(sample().buf)
	noMagic[8] ^= 0xff
	inputs := map[string][]byte{
		"pcap":               pcap.Bytes(),
		"empty":              nil,
		"text":               []byte(strings.Repeat(keylogLine, 3)),
		"SHB type alone":     {0x0A, 0x0D, 0x0D, 0x0A},
		"SHB without magic":  noMagic,
		"eleven bytes":       sample().buf[:11],
		"big-endian pcap hd": {0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for name, in := range inputs {
		for _, rd := range readers {
			out, calls, r, err := sniffAll(rd.wrap(in), 0)
			if err != nil || !bytes.Equal(out, in) || len(calls) != 0 || r.Err() != nil {
				t.Errorf("%s, %s: copy error %v, bytes equal %v, calls %v, Err() %v",
					name, rd.name, err, bytes.Equal(out, in), calls, r.Err())
			}
		}
	}
}

// TestSniffMalformed: a structure that cannot be followed stops the
// sniffing at that block (reported by Err with its offset), fn is not
// called for the DSBs after it, and the bytes still pass unchanged.
func TestSniffMalformed(t *testing.T) {
	le := binary.LittleEndian
	type tc struct {
		name string
		// build returns the file and the offset of the bad block.
		build func() ([]byte, int)
		want  error
		limit int
	}
	// file is a section with a DSB, then bad (the bad block), then
	// a good DSB that must not be reported.
	file := func(bad func(f *ngFile)) ([]byte, int) {
		f := (&ngFile{}).section(le).secrets(ngsecrets.TypeTLSKeyLog, "before", "")
		at := len(f.buf)
		bad(f)
		f.secrets(ngsecrets.TypeTLSKeyLog, "after", "")
		return f.buf, at
	}
	raw := func(words ...uint32) func(f *ngFile) {
		return func(f *ngFile) {
			for _, w := range words {
				f.buf = le.AppendUint32(f.buf, w)
			}
		}
	}
	tcs := []tc{
		{"total length 8", func() ([]byte, int) { return file(raw(6, 8, 8)) }, ngsecrets.ErrMalformed, 0},
		{"total length 0", func() ([]byte, int) { return file(raw(6, 0, 0)) }, ngsecrets.ErrMalformed, 0},
		{"total length 30", func() ([]byte, int) { return file(raw(6, 30, 0, 0, 0, 0, 0, 30)) }, ngsecrets.ErrMalformed, 0},
		{"DSB of 16 bytes", func() ([]byte, int) { return file(raw(0xA, 16, ngsecrets.TypeTLSKeyLog, 16)) }, ngsecrets.ErrMalformed, 0},
		{"SHB of 24 bytes", func() ([]byte, int) { return file(raw(blockSHB, 24, byteOrderMagic, 1, 0, 24)) }, ngsecrets.ErrMalformed, 0},
		{"SHB without magic", func() ([]byte, int) {
			return file(raw(blockSHB, 28, 0x1A2B3C4E, 1, 0xffffffff, 0xffffffff, 28))
		}, ngsecrets.ErrMalformed, 0},
		{"trailer differs", func() ([]byte, int) { return file(raw(7, 16, 0, 20)) }, ngsecrets.ErrMalformed, 0},
		// A packet block's captured length past its block: a reader
		// would take the blocks after it for the packet's data.
		{"packet data past its block", func() ([]byte, int) { return file(raw(6, 32, 0, 0, 0, 100, 100, 32)) }, ngsecrets.ErrMalformed, 0},
		{"obsolete packet data past its block", func() ([]byte, int) { return file(raw(2, 36, 0, 0, 0, 5, 5, 0, 36)) }, ngsecrets.ErrMalformed, 0},
		{"packet block of 28 bytes", func() ([]byte, int) { return file(raw(6, 28, 0, 0, 0, 0, 0, 28)) }, ngsecrets.ErrMalformed, 0},
		{"DSB trailer differs", func() ([]byte, int) {
			return file(raw(0xA, 24, ngsecrets.TypeTLSKeyLog, 4, 0x41414141, 28))
		}, ngsecrets.ErrMalformed, 0},
		{"secrets beyond the block", func() ([]byte, int) {
			return file(raw(0xA, 24, ngsecrets.TypeTLSKeyLog, 5, 0x41414141, 24))
		}, ngsecrets.ErrMalformed, 0},
		{"secrets length huge", func() ([]byte, int) {
			return file(raw(0xA, 24, ngsecrets.TypeTLSKeyLog, 0xFFFFFFFF, 0x41414141, 24))
		}, ngsecrets.ErrMalformed, 0},
		{"secrets over MaxSecrets", func() ([]byte, int) {
			return file(func(f *ngFile) { f.secrets(ngsecrets.TypeTLSKeyLog, strings.Repeat("x", 11), "") })
		}, ngsecrets.ErrTooLarge, 10},
		{"secrets over the default limit", func() ([]byte, int) {
			return file(raw(0xA, 20+ngsecrets.DefaultMaxSecrets+4, ngsecrets.TypeTLSKeyLog, ngsecrets.DefaultMaxSecrets+1))
		}, ngsecrets.ErrTooLarge, 0},
	}
	for _, tc := range tcs {
		in, at := tc.build()
		for _, rd := range readers {
			out, calls, r, err := sniffAll(rd.wrap(in), tc.limit)
			if err != nil || !bytes.Equal(out, in) {
				t.Errorf("%s, %s: copy error %v, bytes equal %v", tc.name, rd.name, err, bytes.Equal(out, in))
			}
			if want := []call{{ngsecrets.TypeTLSKeyLog, "before"}}; !slices.Equal(calls, want) {
				t.Errorf("%s, %s: calls %v, want %v", tc.name, rd.name, calls, want)
			}
			checkErr(t, r.Err(), at, tc.want)
			if be := (*ngsecrets.BlockError)(nil); errors.As(r.Err(), &be) && !strings.Contains(be.Error(), fmt.Sprintf("offset %d", at)) {
				t.Errorf("%s: %q does not name offset %d", tc.name, be.Error(), at)
			}
		}
	}
	// At the limit is not over it.
	f := (&ngFile{}).section(le).secrets(ngsecrets.TypeTLSKeyLog, strings.Repeat("x", 10), "")
	if _, calls, r, _ := sniffAll(bytes.NewReader(f.buf), 10); len(calls) != 1 || r.Err() != nil {
		t.Errorf("secrets at MaxSecrets: calls %v, Err() %v", calls, r.Err())
	}
}

// TestSniffTruncated cuts a file at every offset: the bytes before the cut
// pass unchanged, fn is called for the DSBs the cut leaves whole, and Err
// reports a cut inside a block (at that block) and nothing at a block
// boundary or before the input is known to be pcapng.
func TestSniffTruncated(t *testing.T) {
	f := sample()
	for cut := 0; cut <= len(f.buf); cut++ {
		in := f.buf[:cut]
		var want []call
		for _, d := range f.dsbs {
			if d.end <= cut {
				want = append(want, d.call)
			}
		}
		wantOff := -1
		if at, first := f.blockAt(cut); at >= 0 && !first && cut >= 12 {
			wantOff = at
		}
		for _, rd := range readers[:3] {
			out, calls, r, err := sniffAll(rd.wrap(in), 0)
			if err != nil || !bytes.Equal(out, in) || !slices.Equal(calls, want) {
				t.Fatalf("cut at %d, %s: copy error %v, bytes equal %v, calls %v, want %v",
					cut, rd.name, err, bytes.Equal(out, in), calls, want)
			}
			checkErr(t, r.Err(), wantOff, io.ErrUnexpectedEOF)
		}
	}
}

// TestSniffLyingLength: a block that claims 4 GiB but ends after a few
// bytes costs no memory for the bytes it claims; nor does a DSB that
// claims the most secrets allowed: the buffer grows with the bytes that
// arrive. Both are reported as cut.
func TestSniffLyingLength(t *testing.T) {
	le := binary.LittleEndian
	head := (&ngFile{}).section(le).buf
	packet := le.AppendUint32(slices.Clone(head), 6)
	packet = le.AppendUint32(packet, 0xFFFFFFFC)
	dsb := le.AppendUint32(slices.Clone(head), 0xA)
	dsb = le.AppendUint32(dsb, 0xFFFFFFFC)
	dsb = le.AppendUint32(dsb, ngsecrets.TypeTLSKeyLog)
	dsb = le.AppendUint32(dsb, ngsecrets.DefaultMaxSecrets)
	for name, in := range map[string][]byte{
		"packet block": append(packet, make([]byte, 1000)...),
		"DSB":          append(dsb, keylogLine...),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := ngsecrets.Sniff(bytes.NewReader(in), func(uint32, []byte) error {
			t.Errorf("%s: fn called", name)
			return nil
		})
		n, err := io.Copy(io.Discard, r)
		runtime.ReadMemStats(&after)
		if err != nil || n != int64(len(in)) {
			t.Errorf("%s: copied %d of %d bytes: %v", name, n, len(in), err)
		}
		checkErr(t, r.Err(), len(head), io.ErrUnexpectedEOF)
		// io.Copy's buffer is 32 KiB; the rest must be small.
		if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
			t.Errorf("%s: %d bytes allocated", name, got)
		}
	}
}

// TestSniffFnError: an error from fn is returned by Read, wrapped with the
// DSB's offset, after the bytes up to the end of that DSB and none past
// it; fn is not called again and later Reads return the same error.
func TestSniffFnError(t *testing.T) {
	f := sample()
	stop := errors.New("stop")
	calls := 0
	r := ngsecrets.Sniff(bytes.NewReader(f.buf), func(uint32, []byte) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	var out bytes.Buffer
	_, err := io.Copy(&out, r)
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", f.dsbs[1].start)) {
		t.Errorf("io.Copy: %v, want stop at offset %d", err, f.dsbs[1].start)
	}
	if !bytes.Equal(out.Bytes(), f.buf[:f.dsbs[1].end]) {
		t.Errorf("%d bytes yielded, want the %d up to the end of the second DSB", out.Len(), f.dsbs[1].end)
	}
	if n, err2 := r.Read(make([]byte, 100)); n != 0 || err2 != err {
		t.Errorf("Read after fn's error: %d, %v", n, err2)
	}
	if calls != 2 || r.Err() != nil {
		t.Errorf("%d calls, Err() %v", calls, r.Err())
	}
}

// TestSniffReadError: the wrapped reader's errors are returned as they
// come, and are not a cut file.
func TestSniffReadError(t *testing.T) {
	f := sample()
	boom := errors.New("boom")
	src := io.MultiReader(bytes.NewReader(f.buf[:f.dsbs[0].start+5]), iotest.ErrReader(boom))
	out, calls, r, err := sniffAll(src, 0)
	if !errors.Is(err, boom) || !bytes.Equal(out, f.buf[:f.dsbs[0].start+5]) || len(calls) != 0 || r.Err() != nil {
		t.Errorf("copy error %v, %d bytes, calls %v, Err() %v", err, len(out), calls, r.Err())
	}
}

// TestRefParse checks the fuzz oracle on the hand-built file, so that a
// wrong oracle cannot agree with a wrong Reader unnoticed.
func TestRefParse(t *testing.T) {
	f := sample()
	calls, off, err := refParse(f.buf, ngsecrets.DefaultMaxSecrets)
	if !slices.Equal(calls, f.calls()) || off != -1 || err != nil {
		t.Errorf("refParse: %v, %d, %v", calls, off, err)
	}
	calls, off, err = refParse(f.buf[:f.dsbs[2].start+17], ngsecrets.DefaultMaxSecrets)
	if !slices.Equal(calls, f.calls()[:2]) || off != f.dsbs[2].start || err != io.ErrUnexpectedEOF {
		t.Errorf("refParse of a cut file: %v, %d, %v", calls, off, err)
	}
}
