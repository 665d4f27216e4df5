package ngsecrets_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/manifester/manifester/internal/ngsecrets"
)

// ngFile builds pcapng files by hand, block by block, and remembers where
// each block and each DSB is.
type ngFile struct {
	buf    []byte
	order  byteOrder
	starts []int   // offset of each block
	dsbs   []dsbAt // the DSBs written, in order
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// dsbAt is a DSB written by ngFile: its secrets and where it lies.
type dsbAt struct {
	call
	start, end int
}

// call is one call of fn.
type call struct {
	typ  uint32
	data string
}

func (c call) String() string { return fmt.Sprintf("%#08x %q", c.typ, c.data) }

func pad4(n int) int { return (n + 3) &^ 3 }

// block writes a block of type typ around body, padded to 32 bits.
func (f *ngFile) block(typ uint32, body []byte) *ngFile {
	total := 12 + pad4(len(body))
	f.starts = append(f.starts, len(f.buf))
	f.buf = f.order.AppendUint32(f.buf, typ)
	f.buf = f.order.AppendUint32(f.buf, uint32(total))
	f.buf = append(f.buf, body...)
	f.buf = append(f.buf, make([]byte, pad4(len(body))-len(body))...)
	f.buf = f.order.AppendUint32(f.buf, uint32(total))
	return f
}

// section starts a section in the given byte order: a Section Header
// Block, version 1.0, section length unknown, and one Ethernet interface.
func (f *ngFile) section(order byteOrder) *ngFile {
	f.order = order
	var b []byte
	b = order.AppendUint32(b, byteOrderMagic)
	b = order.AppendUint16(b, 1)
	b = order.AppendUint16(b, 0)
	b = order.AppendUint64(b, ^uint64(0))
	f.block(blockSHB, b)
	b = order.AppendUint16(nil, 1) // LINKTYPE_ETHERNET
	b = order.AppendUint16(b, 0)
	b = order.AppendUint32(b, 65535)
	return f.block(1, b)
}

// packet writes an Enhanced Packet Block holding data on interface 0.
func (f *ngFile) packet(data []byte) *ngFile {
	var b []byte
	b = f.order.AppendUint32(b, 0) // interface
	b = f.order.AppendUint32(b, 0) // timestamp, high
	b = f.order.AppendUint32(b, uint32(len(f.buf)))
	b = f.order.AppendUint32(b, uint32(len(data)))
	b = f.order.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return f.block(6, b)
}

// frame is a small Ethernet frame, so that packets are packets to a reader.
func frame(n byte) []byte {
	b := make([]byte, 60)
	copy(b, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, n, 0x88, 0xb5})
	return b
}

// secrets writes a DSB of secrets type typ holding data; comment, when
// set, is written as an opt_comment option followed by opt_endofopt.
func (f *ngFile) secrets(typ uint32, data string, comment string) *ngFile {
	var b []byte
	b = f.order.AppendUint32(b, typ)
	b = f.order.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	b = append(b, make([]byte, pad4(len(data))-len(data))...)
	if comment != "" {
		b = f.order.AppendUint16(b, 1)
		b = f.order.AppendUint16(b, uint16(len(comment)))
		b = append(b, comment...)
		b = append(b, make([]byte, pad4(len(comment))-len(comment))...)
		b = append(b, 0, 0, 0, 0)
	}
	start := len(f.buf)
	f.block(blockDSB, b)
	f.dsbs = append(f.dsbs, dsbAt{call{typ, data}, start, len(f.buf)})
	return f
}

// calls returns the DSBs written, as fn should see them.
func (f *ngFile) calls() []call {
	var cs []call
	for _, d := range f.dsbs {
		cs = append(cs, d.call)
	}
	return cs
}

// blockAt returns the offset of the block holding byte off (-1 past the
// end), and whether off is a block's first byte.
func (f *ngFile) blockAt(off int) (int, bool) {
	if off >= len(f.buf) {
		return -1, false
	}
	at := -1
	for _, s := range f.starts {
		if s <= off {
			at = s
		}
	}
	return at, at == off
}

// sniffAll reads src through ngsecrets.Sniff to the end, as io.Copy does, with the
// given MaxSecrets (0: the default); it returns the bytes yielded, the
// calls of fn, the Reader and io.Copy's error.
func sniffAll(src io.Reader, limit int) ([]byte, []call, *ngsecrets.Reader, error) {
	var calls []call
	r := ngsecrets.Sniff(src, func(typ uint32, data []byte) error {
		calls = append(calls, call{typ, string(data)})
		return nil
	})
	r.MaxSecrets = limit
	var out bytes.Buffer
	_, err := io.Copy(&out, r)
	return out.Bytes(), calls, r, err
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), c.n)])
}

// readers are the ways the tests feed a file to ngsecrets.Sniff: at once, in tiny
// and odd reads, with the EOF on the last data.
var readers = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"OneByteReader", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"HalfReader", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"DataErrReader", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	{"chunks of 3", func(b []byte) io.Reader { return &chunkReader{bytes.NewReader(b), 3} }},
	{"chunks of 7", func(b []byte) io.Reader { return &chunkReader{bytes.NewReader(b), 7} }},
	{"chunks of 17", func(b []byte) io.Reader { return &chunkReader{bytes.NewReader(b), 17} }},
}

// refParse is the tests' oracle: a plain walk over a whole file, as far
// from the streaming code as it can be, returning the DSBs and the error
// ngsecrets.Sniff should report (its block offset and sentinel; -1 and nil when
// none).
func refParse(b []byte, limit int) ([]call, int, error) {
	isSHB := func(p []byte) bool { return bytes.Equal(p, []byte{0x0A, 0x0D, 0x0D, 0x0A}) }
	orderOf := func(p []byte) binary.ByteOrder {
		switch {
		case binary.LittleEndian.Uint32(p) == 0x1A2B3C4D:
			return binary.LittleEndian
		case binary.BigEndian.Uint32(p) == 0x1A2B3C4D:
			return binary.BigEndian
		}
		return nil
	}
	if len(b) < 12 || !isSHB(b[:4]) || orderOf(b[8:12]) == nil {
		return nil, -1, nil
	}
	var calls []call
	var order binary.ByteOrder
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < 8 {
			return calls, off, io.ErrUnexpectedEOF
		}
		minLen := uint32(12)
		if isSHB(rest[:4]) {
			if len(rest) < 12 {
				return calls, off, io.ErrUnexpectedEOF
			}
			if order = orderOf(rest[8:12]); order == nil {
				return calls, off, ngsecrets.ErrMalformed
			}
			minLen = 28
		}
		typ, total := order.Uint32(rest[:4]), order.Uint32(rest[4:8])
		packet := typ == 6 || typ == 2 // enhanced, obsolete
		switch {
		case typ == 0xA:
			minLen = 20
		case packet:
			minLen = 32
		}
		if total < minLen || total%4 != 0 {
			return calls, off, ngsecrets.ErrMalformed
		}
		if packet {
			if len(rest) < 24 {
				return calls, off, io.ErrUnexpectedEOF
			}
			if uint64(order.Uint32(rest[20:24]))+32 > uint64(total) {
				return calls, off, ngsecrets.ErrMalformed
			}
		}
		if typ == 0xA {
			if len(rest) < 16 {
				return calls, off, io.ErrUnexpectedEOF
			}
			n := order.Uint32(rest[12:16])
			if uint64(n)+20 > uint64(total) {
				return calls, off, ngsecrets.ErrMalformed
			}
			if uint64(n) > uint64(limit) {
				return calls, off, ngsecrets.ErrTooLarge
			}
		}
		if uint64(len(rest)) < uint64(total) {
			return calls, off, io.ErrUnexpectedEOF
		}
		if order.Uint32(rest[total-4:total]) != total {
			return calls, off, ngsecrets.ErrMalformed
		}
		if typ == 0xA {
			n := order.Uint32(rest[12:16])
			calls = append(calls, call{order.Uint32(rest[8:12]), string(rest[16 : 16+n])})
		}
		off += int(total)
	}
	return calls, -1, nil
}

// checkErr checks that err is nil when wantOff is -1, and otherwise a
// *ngsecrets.BlockError at wantOff wrapping want.
func checkErr(t *testing.T, err error, wantOff int, want error) {
	t.Helper()
	if wantOff < 0 {
		if err != nil {
			t.Errorf("Err() = %v, want nil", err)
		}
		return
	}
	var be *ngsecrets.BlockError
	if !errors.As(err, &be) {
		t.Errorf("Err() = %v, want a *ngsecrets.BlockError at offset %d wrapping %v", err, wantOff, want)
		return
	}
	if be.Offset != int64(wantOff) || !errors.Is(err, want) {
		t.Errorf("Err() = %v (offset %d), want offset %d wrapping %v", err, be.Offset, wantOff, want)
	}
}

// The pcapng numbers the hand-built files use, written out here as the
// format defines them (not taken from the package under test).
const (
	blockSHB       uint32 = 0x0A0D0D0A
	blockDSB       uint32 = 0x0000000A
	byteOrderMagic uint32 = 0x1A2B3C4D
)
