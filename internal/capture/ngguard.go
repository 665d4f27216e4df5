package capture

import (
	"encoding/binary"
	"fmt"
	"io"
)

// maxInterfaces bounds the interfaces a pcapng section may describe:
// pcapgo keeps some 300 bytes for each (from a block of 20), for the
// whole section. Real captures have a few, dumpcap at most some hundreds.
const maxInterfaces = 4096

// pcapng block types the guard looks at.
const (
	ngSHB = 0x0a0d0d0a
	ngIDB = 0x00000001
	ngPB  = 0x00000002 // packet block (obsolete)
	ngSPB = 0x00000003 // simple packet block
	ngNRB = 0x00000004 // name resolution block
	ngEPB = 0x00000006
	// ngSkipped is the type an oversized packet block or a name
	// resolution block is given on its way to pcapgo: a type pcapng does
	// not define, which pcapgo skips without reading it.
	ngSkipped = 0x00000bad
)

// maxPacketBlock is the longest packet block read: a packet of
// [MaxPacket] bytes, its header and room for options. An enhanced (or
// obsolete) packet block whose captured length passes MaxPacket is
// skipped too, whatever its block's length (a captured length past its
// block has pcapgo read the blocks after it as the packet).
const maxPacketBlock = MaxPacket + 32 + 1<<16

// ngGuard passes a pcapng file on to pcapgo, block by block, taking out
// what pcapgo would hold in memory out of proportion to the capture:
// name resolution blocks (pcapgo keeps every name for the section, the
// reader uses none), packet blocks longer than maxPacketBlock (pcapgo
// holds a packet as long as its block says), counted in oversized; and
// it stops a section of more than maxInterfaces interfaces with an
// error. It changes nothing else; where the block structure cannot be
// followed (a length under 12 or not a multiple of 4, no byte-order
// magic), it passes the rest through unchanged, for pcapgo (and
// ngsecrets, which reads the same bytes first) to report.
type ngGuard struct {
	r     io.Reader
	order binary.ByteOrder
	// off is the input offset of the next byte; left the bytes of the
	// current block still to pass; lost: the structure could not be
	// followed, everything passes.
	off, left int64
	lost      bool
	// head is a block's header on its way out (a packet block's with
	// its packet header), pending its unsent part.
	head    [28]byte
	pending []byte
	// interfaces counts the section's interface descriptions.
	interfaces int
	oversized  int64
	err        error
}

func (g *ngGuard) Read(p []byte) (int, error) {
	if len(g.pending) > 0 {
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	}
	if g.lost {
		return g.r.Read(p)
	}
	if g.left == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if err := g.nextBlock(); err != nil {
			return 0, err
		}
		return g.Read(p)
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, err := g.r.Read(p)
	g.off += int64(n)
	g.left -= int64(n)
	return n, err
}

// nextBlock reads the next block's header into pending, altered as the
// block requires, and sets left to the rest of the block.
func (g *ngGuard) nextBlock() error {
	h := g.head[:8]
	n, err := io.ReadFull(g.r, h)
	if err != nil {
		g.pending = h[:n]
		g.off += int64(n)
		return noPartialEOF(n, err)
	}
	start := g.off
	g.off += 8
	if binary.LittleEndian.Uint32(h) == ngSHB {
		h = g.head[:12]
		m, err := io.ReadFull(g.r, h[8:])
		g.off += int64(m)
		if err != nil {
			g.pending = h[:8+m]
			return nil // the reader behind reports the cut
		}
		switch binary.LittleEndian.Uint32(h[8:]) {
		case 0x1a2b3c4d:
			g.order = binary.LittleEndian
		case 0x4d3c2b1a:
			g.order = binary.BigEndian
		default:
			g.pending, g.lost = h, true
			return nil
		}
		g.interfaces = 0
	}
	g.pending = h
	if g.order == nil {
		g.lost = true // no section header first
		return nil
	}
	length := int64(g.order.Uint32(h[4:8]))
	if length < 12 || length%4 != 0 || length < int64(len(h))+4 {
		g.lost = true
		return nil
	}
	g.left = length - int64(len(h))
	switch g.order.Uint32(h[:4]) {
	case ngIDB:
		if g.interfaces++; g.interfaces > maxInterfaces {
			g.pending, g.left = nil, 0
			g.err = fmt.Errorf("pcapng block at offset %d: a section of more than %d interfaces is not read", start, maxInterfaces)
			return g.err
		}
	case ngNRB:
		g.order.PutUint32(h[:4], ngSkipped)
	case ngEPB, ngPB:
		// The captured length is at the same place in both.
		if length < 32 {
			return nil // too short to hold it: pcapgo says so
		}
		h = g.head[:28]
		m, err := io.ReadFull(g.r, h[8:])
		g.off += int64(m)
		g.pending, g.left = h[:8+m], length-int64(8+m)
		if err != nil {
			return nil // the reader behind reports the cut
		}
		if g.order.Uint32(h[20:24]) > MaxPacket || length > maxPacketBlock {
			g.skipBlock(h)
		}
	case ngSPB:
		if length > maxPacketBlock {
			g.skipBlock(h)
		}
	}
	return nil
}

// skipBlock gives the block whose header h holds a type that pcapgo
// skips, and counts it oversized.
func (g *ngGuard) skipBlock(h []byte) {
	g.order.PutUint32(h[:4], ngSkipped)
	g.oversized++
}

// noPartialEOF is err, with a header cut short after n > 0 bytes left
// for the reader behind to report: those bytes are passed on first.
func noPartialEOF(n int, err error) error {
	if n > 0 {
		return nil
	}
	return err
}
