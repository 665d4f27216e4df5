// Package ngsecrets picks the decryption secrets out of a pcapng capture
// while the capture streams past.
//
// A pcapng file is a sequence of blocks. Each block starts with its type
// and its total length (both 32-bit, in the byte order its section's
// Section Header Block declares) and ends with the total length again. A
// Decryption Secrets Block (DSB, block type 0x0000000A) carries key
// material that lets a reader decrypt the captured traffic: a secrets
// type ([TypeTLSKeyLog], "TLSK", for a TLS key log in the NSS
// SSLKEYLOGFILE format; others exist, such as [TypeWireGuard]), the length
// of the secrets, the secrets padded to 32 bits, then options. Tools such
// as Wireshark's editcap --inject-secrets write them, before the packets
// whose traffic they decrypt.
//
// [Sniff] wraps the reader a capture is read from. Whoever reads from it
// gets the same bytes, unchanged and undelayed, while the sniffer follows
// the block structure of the bytes as they pass and hands each DSB to a
// callback. Only passing bytes are looked at: nothing is read ahead,
// nothing twice, nothing is held back until the end of the input, so the
// input may be a pipe. Blocks other than DSBs are skipped with constant
// memory whatever their length; a DSB's secrets are collected as they
// arrive, up to a limit ([DefaultMaxSecrets], or [Reader.MaxSecrets]).
//
// Input that is not pcapng passes through untouched. A pcapng structure
// the sniffer cannot follow stops the sniffing but not the bytes: it is
// reported by [Reader.Err], and the capture reader behind it reports the
// malformed file in its own terms.
package ngsecrets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Secrets types of a Decryption Secrets Block.
const (
	// TypeTLSKeyLog ("TLSK") is a TLS key log in the NSS SSLKEYLOGFILE
	// format: text lines such as "CLIENT_RANDOM <hex> <hex>".
	TypeTLSKeyLog uint32 = 0x544c534b
	// TypeWireGuard ("WGKL") is a WireGuard key log.
	TypeWireGuard uint32 = 0x57474b4c
)

// DefaultMaxSecrets is the largest secrets length of a DSB a [Reader]
// collects unless [Reader.MaxSecrets] says otherwise: 16 MiB, room for
// some 95,000 CLIENT_RANDOM lines of 176 bytes (TLS 1.2 sessions), or
// 20,000 TLS 1.3 sessions of five traffic-secret lines. A longer one is
// an error ([ErrTooLarge]).
const DefaultMaxSecrets = 16 << 20

// Block types and the byte-order magic of pcapng.
const (
	blockSHB       uint32 = 0x0A0D0D0A // the same in either byte order
	blockDSB       uint32 = 0x0000000A
	blockEPB       uint32 = 0x00000006 // enhanced packet block
	blockPB        uint32 = 0x00000002 // packet block (obsolete)
	byteOrderMagic uint32 = 0x1A2B3C4D
	minBlock              = 12 // type, total length, trailing length
	minSHB                = 28 // + magic, version, section length
	minDSB                = 20 // + secrets type, secrets length
	minPacket             = 32 // + interface, timestamp, captured and original lengths
)

// Errors a [BlockError] wraps.
var (
	// ErrMalformed is a block structure that cannot be followed: a total
	// length under the minimum or not a multiple of 4, a trailing length
	// that differs from the leading one, a section header with no valid
	// byte-order magic, a secrets length beyond its block, a packet
	// block's captured length beyond its block (a reader would take the
	// blocks after it for the packet's data).
	ErrMalformed = errors.New("malformed pcapng block")
	// ErrTooLarge is a DSB whose secrets length is over the limit.
	ErrTooLarge = errors.New("decryption secrets over the limit")
)

// BlockError is a pcapng block the [Reader] could not follow: it stopped
// sniffing there. Err wraps [ErrMalformed], [ErrTooLarge], or
// [io.ErrUnexpectedEOF] for a block cut by the end of the input.
type BlockError struct {
	// Offset is the byte offset in the input of the block's first byte.
	Offset int64
	// Err says what is wrong with the block.
	Err error
}

// Error names the block's offset and the problem.
func (e *BlockError) Error() string {
	return fmt.Sprintf("pcapng block at offset %d: %v", e.Offset, e.Err)
}

// Unwrap returns e.Err.
func (e *BlockError) Unwrap() error { return e.Err }

// state is where in the block structure the next byte falls.
type state uint8

const (
	stFirst   state = iota // the first block's header: not known to be pcapng yet
	stHead                 // a block's header (type, length; magic of an SHB; secrets type and length of a DSB)
	stSecrets              // a DSB's secrets
	stSkip                 // the rest of a block's body
	stTrailer              // a block's trailing length
	stDone                 // not sniffing: not pcapng, or a block that could not be followed
)

// Reader yields the bytes of the reader it wraps, unchanged, and calls a
// function with every Decryption Secrets Block among them; see [Sniff].
type Reader struct {
	// MaxSecrets is the largest secrets length of a DSB that is collected;
	// zero or less means [DefaultMaxSecrets]. It is read as each DSB's
	// header passes: set it before the first Read.
	MaxSecrets int

	r  io.Reader
	fn func(secretsType uint32, data []byte) error

	st    state
	big   bool  // the current section is big-endian
	off   int64 // bytes passed so far
	start int64 // offset of the current block

	hdr        [24]byte // the header or trailer being collected
	have, need int      // bytes of hdr collected, and wanted

	typ, total      uint32 // the current block's type and total length
	secType, secLen uint32 // the current DSB's secrets type and length
	secrets         []byte // the current DSB's secrets so far
	skip            int64  // bytes of the body still to pass

	err   error // the block error that stopped sniffing
	fnErr error // fn's error, returned by every Read from then on
}

// Sniff returns a reader that yields exactly the bytes of r, unchanged,
// and, as they pass, walks the pcapng block structure and calls fn with
// the type and data of every Decryption Secrets Block, in file order,
// before the reader yields the bytes that follow that block. data is the
// secrets alone (no padding, no options), freshly allocated for each
// call: fn may keep it. A nil fn only checks the structure.
//
// Input that is not pcapng (its first block is not a Section Header Block
// with a valid byte-order magic) passes through and fn is never called.
// A block that cannot be followed, or is cut by the end of the input,
// stops the sniffing: the bytes keep flowing, fn is not called again, and
// [Reader.Err] reports it. An error from fn stops the reader: the Read
// during which fn failed returns the bytes up to the end of that DSB and
// fn's error (wrapped with the block's offset), and every later Read
// returns that error; bytes read from r past that DSB are not yielded.
// Errors of r itself are returned as they come.
func Sniff(r io.Reader, fn func(secretsType uint32, data []byte) error) *Reader {
	return &Reader{r: r, fn: fn, st: stFirst, need: minBlock}
}

// Err returns the [*BlockError] that stopped the sniffing, or nil: no
// problem so far, or input that is not pcapng. A block cut by the end of
// the input is reported once the wrapped reader has returned [io.EOF];
// before the first block's byte-order magic has passed, the input is not
// known to be pcapng and a cut is no error.
func (r *Reader) Err() error { return r.err }

// Read reads from the wrapped reader into p and follows the bytes read;
// see [Sniff].
func (r *Reader) Read(p []byte) (int, error) {
	if r.fnErr != nil {
		return 0, r.fnErr
	}
	n, err := r.r.Read(p)
	if n < 0 || n > len(p) {
		return 0, fmt.Errorf("ngsecrets: the wrapped reader returned %d bytes for a buffer of %d", n, len(p))
	}
	if n > 0 && r.st != stDone {
		if k, ferr := r.scan(p[:n]); ferr != nil {
			r.fnErr = ferr
			return k, ferr
		}
	}
	if err == io.EOF {
		r.eof()
	}
	return n, err
}

// u32 reads a 32-bit field in the current section's byte order.
func (r *Reader) u32(b []byte) uint32 {
	if r.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// fail stops the sniffing at the current block.
func (r *Reader) fail(err error) {
	r.err = &BlockError{Offset: r.start, Err: err}
	r.st = stDone
	r.secrets = nil
}

// eof handles the end of the input: a block begun is cut.
func (r *Reader) eof() {
	switch {
	case r.st == stDone || r.st == stFirst:
		// Not pcapng, already stopped, or never known to be pcapng.
	case r.st == stHead && r.have == 0 && r.need == 8:
		// Between blocks.
	case r.total == 0:
		r.fail(fmt.Errorf("cut after %d bytes of its header: %w", r.off-r.start, io.ErrUnexpectedEOF))
	default:
		r.fail(fmt.Errorf("cut after %d of its %d bytes: %w", r.off-r.start, r.total, io.ErrUnexpectedEOF))
	}
}

// next starts the block at the current offset.
func (r *Reader) next() {
	r.st, r.have, r.need = stHead, 0, 8
	r.start, r.typ, r.total = r.off, 0, 0
}

// scan follows b, the bytes the reader is about to yield. When fn fails it
// returns the number of bytes up to the end of the DSB fn was called for,
// and fn's error.
func (r *Reader) scan(b []byte) (int, error) {
	i := 0
	for i < len(b) && r.st != stDone {
		switch r.st {
		case stFirst, stHead, stTrailer:
			c := copy(r.hdr[r.have:r.need], b[i:])
			r.have += c
			i += c
			r.off += int64(c)
			if r.have < r.need {
				continue
			}
			if r.st == stTrailer {
				if err := r.trailer(); err != nil {
					return i, err
				}
			} else {
				r.header()
			}
		case stSecrets:
			c := min(int(r.secLen)-len(r.secrets), len(b)-i)
			r.collect(b[i : i+c])
			i += c
			r.off += int64(c)
			if len(r.secrets) == int(r.secLen) {
				r.st = stSkip
				r.endBody()
			}
		case stSkip:
			c := len(b) - i
			if r.skip < int64(c) {
				c = int(r.skip)
			}
			r.skip -= int64(c)
			i += c
			r.off += int64(c)
			r.endBody()
		}
	}
	return len(b), nil
}

// endBody moves on to the trailer once the body has passed.
func (r *Reader) endBody() {
	if r.st == stSkip && r.skip == 0 {
		r.st, r.have, r.need = stTrailer, 0, 4
	}
}

// header acts on r.hdr[:r.need], complete: it asks for more of the
// header, or checks it and moves on to the body.
func (r *Reader) header() {
	shb := r.hdr[0] == 0x0A && r.hdr[1] == 0x0D && r.hdr[2] == 0x0D && r.hdr[3] == 0x0A
	if r.st == stFirst && !shb {
		r.st = stDone // not pcapng
		return
	}
	if shb {
		if r.need < 12 {
			r.need = 12
			return
		}
		switch {
		case binary.LittleEndian.Uint32(r.hdr[8:12]) == byteOrderMagic:
			r.big = false
		case binary.BigEndian.Uint32(r.hdr[8:12]) == byteOrderMagic:
			r.big = true
		case r.st == stFirst:
			r.st = stDone // not pcapng
			return
		default:
			r.fail(fmt.Errorf("%w: section header with byte-order magic % x", ErrMalformed, r.hdr[8:12]))
			return
		}
		r.st = stHead
	}
	r.typ, r.total = r.u32(r.hdr[0:4]), r.u32(r.hdr[4:8])
	minLen := uint32(minBlock)
	switch r.typ {
	case blockSHB:
		minLen = minSHB
	case blockDSB:
		minLen = minDSB
	case blockEPB, blockPB:
		minLen = minPacket
	}
	if r.total < minLen || r.total%4 != 0 {
		r.fail(fmt.Errorf("%w: block type %#08x with total length %d (at least %d, a multiple of 4)", ErrMalformed, r.typ, r.total, minLen))
		return
	}
	if r.typ == blockEPB || r.typ == blockPB {
		if r.need < 24 {
			r.need = 24
			return
		}
		if c := r.u32(r.hdr[20:24]); uint64(c) > uint64(r.total-minPacket) {
			r.fail(fmt.Errorf("%w: packet block with captured length %d in a block of %d bytes (room for %d)", ErrMalformed, c, r.total, r.total-minPacket))
			return
		}
	}
	if r.typ != blockDSB {
		r.st, r.skip = stSkip, int64(r.total)-int64(r.need)-4
		r.endBody()
		return
	}
	if r.need < 16 {
		r.need = 16
		return
	}
	r.secType, r.secLen = r.u32(r.hdr[8:12]), r.u32(r.hdr[12:16])
	room := r.total - minDSB
	if r.secLen > room {
		r.fail(fmt.Errorf("%w: decryption secrets of %d bytes in a block of %d", ErrMalformed, r.secLen, r.total))
		return
	}
	limit := r.MaxSecrets
	if limit <= 0 {
		limit = DefaultMaxSecrets
	}
	if uint64(r.secLen) > uint64(limit) {
		r.fail(fmt.Errorf("%w: decryption secrets of %d bytes, over the limit of %d", ErrTooLarge, r.secLen, limit))
		return
	}
	r.secrets = nil
	r.st, r.skip = stSecrets, int64(room-r.secLen)
	if r.secLen == 0 {
		r.st = stSkip
		r.endBody()
	}
}

// collect appends p to the secrets. The buffer grows with the bytes that
// arrive (at most doubling, never past the secrets length), not with the
// length the header announced.
func (r *Reader) collect(p []byte) {
	need := len(r.secrets) + len(p)
	if need > cap(r.secrets) {
		size := int(r.secLen)
		c := max(need, min(2*cap(r.secrets), size), min(512, size))
		s := make([]byte, len(r.secrets), c)
		copy(s, r.secrets)
		r.secrets = s
	}
	r.secrets = append(r.secrets, p...)
}

// trailer checks the trailing length of the block and, for a DSB, calls
// fn; then the next block starts.
func (r *Reader) trailer() error {
	if t := r.u32(r.hdr[0:4]); t != r.total {
		r.fail(fmt.Errorf("%w: block type %#08x with total length %d, trailing length %d", ErrMalformed, r.typ, r.total, t))
		return nil
	}
	typ, data, start := r.typ, r.secrets, r.start
	r.secrets = nil
	r.next()
	if typ == blockDSB && r.fn != nil {
		if data == nil {
			data = []byte{}
		}
		if err := r.fn(r.secType, data); err != nil {
			return fmt.Errorf("ngsecrets: decryption secrets block at offset %d: %w", start, err)
		}
	}
	return nil
}
