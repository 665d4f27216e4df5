package codec

import (
	"bytes"
	"encoding/binary"

	"github.com/manifester/manifester/internal/schema"
)

// Shared integer arrays
//
// A decode without rows keeps its last integer arrays by their bytes: an
// array whose elements are the same bytes, of the same kind, as one read
// earlier in the same frame gets that array's Kids instead of Values of
// its own. A partition's ISR is mostly its replica list, and the replica
// lists of a topic's partitions are a few broker sets over and over, so a
// Metadata response of thousands of partitions makes a few hundred int
// arrays instead of thousands (each element is a Value). Decoded
// values may share sub-values already (the defaults of absent fields);
// callers that change a decoded value Clone it first. The cache lives for
// one decode: frames never share with each other.

const (
	// maxSharedInts is the longest integer array that is looked up.
	maxSharedInts = 16
	// sharedSlots is the size of the cache (a power of two).
	sharedSlots = 64
)

// sharedCache is a decode's integer arrays, by a hash of their bytes;
// used lists the slots set, so that emptying it costs what was set.
type sharedCache struct {
	slots [sharedSlots]sharedInts
	used  []uint8
}

// reset empties the cache (so that it keeps no frame's values or bytes).
func (c *sharedCache) reset() {
	for _, i := range c.used {
		c.slots[i] = sharedInts{}
	}
	c.used = c.used[:0]
}

// sharedInts is one integer array of this decode: its element kind, the
// bytes it was read from (in the decoded buffer) and its Kids.
type sharedInts struct {
	kind schema.Kind
	raw  []byte
	kids []Value
}

// sharedIntElems decodes an array of count (1 to maxSharedInts)
// fixed-width integers of kind k without rows, sharing the Kids of an
// equal array read before when there is one. It returns false, having
// read nothing, when k is not a fixed-width integer kind or the bytes are
// not all there (the caller then takes the general path).
func (d *decoder) sharedIntElems(k schema.Kind, count int, out *Value) bool {
	var size int
	switch k {
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		size = k.FixedSize()
	default:
		return false
	}
	off := d.r.Off
	n := count * size
	if n > len(d.r.B)-off {
		return false
	}
	raw := d.r.B[off : off+n : off+n]
	c := d.shared
	if c == nil {
		c = &sharedCache{used: make([]uint8, 0, sharedSlots)}
		d.shared = c
	}
	i := uint8(rawHash(raw, k) & (sharedSlots - 1))
	slot := &c.slots[i]
	if slot.kids != nil && slot.kind == k && bytes.Equal(slot.raw, raw) {
		out.setKids(slot.kids)
		d.r.Off = off + n
		return true
	}
	kids := d.values(count)
	d.intElems(k, kids) // cannot fail: the bytes are there
	if slot.kids == nil {
		c.used = append(c.used, i)
	}
	*slot = sharedInts{kind: k, raw: raw, kids: kids}
	out.setKids(kids)
	return true
}

// rawHash mixes the bytes of a short integer array and its kind.
func rawHash(b []byte, k schema.Kind) uint64 {
	h := uint64(len(b))<<8 | uint64(k)
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0x9e3779b97f4a7c15
		b = b[8:]
	}
	if len(b) >= 4 {
		h = (h ^ uint64(binary.LittleEndian.Uint32(b))) * 0x9e3779b97f4a7c15
		b = b[4:]
	}
	for _, c := range b {
		h = (h ^ uint64(c)) * 0x9e3779b97f4a7c15
	}
	return h ^ h>>29
}
