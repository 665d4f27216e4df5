package records

import "github.com/manifester/manifester/internal/span"

// generalOnly makes every record take the general path (a test switch,
// for checking the fast path against it).
var generalOnly bool

// maxFastHeaders is the most headers a record read by fastRecord has
// (more take the general path, which checks the budget every 256).
const maxFastHeaders = 255

// uvarint2 reads an unsigned varint of one or two bytes at b[i:end]; n
// is 0 when the varint is not there whole in one or two bytes.
func uvarint2(b []byte, i, end int) (v uint32, n int) {
	if i < end {
		c := b[i]
		if c < 0x80 {
			return uint32(c), 1
		}
		if i+1 < end {
			if c1 := b[i+1]; c1 < 0x80 {
				return uint32(c&0x7f) | uint32(c1)<<7, 2
			}
		}
	}
	return 0, 0
}

func zigzag(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

// blobAt is a varint-length-prefixed key, value or header part read by
// fastRecord: its prefix at off (n bytes), its length l (-1: null) and
// the offset after it.
type blobAt struct {
	off, n, end int
	l           int32
}

// readBlob reads a blob at b[i:end]; ok is false unless its prefix has
// one or two bytes, its length is -1 (when allowNull) or more, and its
// bytes are there.
func readBlob(b []byte, i, end int, allowNull bool) (blobAt, bool) {
	u, n := uvarint2(b, i, end)
	l := zigzag(u)
	if n == 0 || l < -1 || l == -1 && !allowNull || int(l) > end-i-n {
		return blobAt{}, false
	}
	return blobAt{i, n, i + n + max(int(l), 0), l}, true
}

// fastRecord reads a record of the common shape: every varint in one or
// two bytes, at most maxFastHeaders headers, all its bytes there and
// nothing left in it, and with no Contents to interpret it. Its rows are
// added in one block and filled as its bytes are read; for any other
// record it returns false having read nothing and with the block taken
// back (the general path then reads it, failing where it must), so the
// rows are the general path's.
func (rr *recordReader) fastRecord(parent span.ID, idx int) bool {
	b := rr.r.B
	start := rr.r.Off
	lu, ln := uvarint2(b, start, len(b))
	length := zigzag(lu)
	i := start + ln
	if ln == 0 || length < 1 || int(length) > len(b)-i {
		return false
	}
	end := i + int(length)
	attrsAt := i
	i++
	tsAt := i
	tu, tn := uvarint2(b, i, end)
	i += tn
	offAt := i
	ou, on := uvarint2(b, i, end)
	i += on
	if tn == 0 || on == 0 {
		return false
	}
	key, ok := readBlob(b, i, end, true)
	if !ok {
		return false
	}
	value, ok := readBlob(b, key.end, end, true)
	if !ok {
		return false
	}
	hcAt := value.end
	hu, hn := uvarint2(b, hcAt, end)
	hc := zigzag(hu)
	i = hcAt + hn
	if hn == 0 || hc < 0 || hc > maxFastHeaders || int(hc) > (end-i)/2 {
		return false
	}
	t := rr.t
	if t == nil {
		for range int(hc) {
			k, ok := readBlob(b, i, end, false)
			if !ok {
				return false
			}
			v, ok := readBlob(b, k.end, end, true)
			if !ok {
				return false
			}
			i = v.end
		}
		if i != end {
			return false
		}
		rr.r.Off = end
		return true
	}
	nr := 8 + 3*int(hc)
	rn, rows := t.AddRows(nr)
	for h := range int(hc) {
		k, ok := readBlob(b, i, end, false)
		if !ok {
			t.Nodes = t.Nodes[:rn]
			return false
		}
		v, ok := readBlob(b, k.end, end, true)
		if !ok {
			t.Nodes = t.Nodes[:rn]
			return false
		}
		i = v.end
		at := 8 + 3*h
		hid := rn + span.ID(at)
		next := hid + 3
		if h == int(hc)-1 {
			next = span.None
		}
		setRow(&rows[at], rn, next, descHeader, k.off, v.end-k.off, span.ValStruct, 0)
		rows[at].Index, rows[at].First, rows[at].Last = int32(h), hid+1, hid+2
		setBlob(&rows[at+1], hid, hid+2, descHeaderKey, k, nil)
		rows[at+1].Val = span.ValString
		setBlob(&rows[at+2], hid, span.None, descHeaderValue, v, b)
	}
	if i != end {
		t.Nodes = t.Nodes[:rn]
		return false
	}
	rr.r.Off = end
	// The record, its six leaves and the header count.
	setRow(&rows[0], parent, span.None, descRecord, start, end-start, span.ValStruct, 0)
	rows[0].Index, rows[0].First, rows[0].Last = int32(idx), rn+1, rn+7
	if hc > 0 {
		rows[0].Last = rn + span.ID(nr) - 3
	}
	setRow(&rows[1], rn, rn+2, descRecLength, start, ln, span.ValInt, int64(length))
	setRow(&rows[2], rn, rn+3, descRecAttrs, attrsAt, 1, span.ValInt, int64(int8(b[attrsAt])))
	setRow(&rows[3], rn, rn+4, descTSDelta, tsAt, tn, span.ValInt, int64(zigzag(tu)))
	setRow(&rows[4], rn, rn+5, descOffDelta, offAt, on, span.ValInt, int64(zigzag(ou)))
	setBlob(&rows[5], rn, rn+6, descKey, key, b)
	setBlob(&rows[6], rn, rn+7, descValue, value, b)
	next := rn + 8
	if hc == 0 {
		next = span.None
	}
	setRow(&rows[7], rn, next, descHeaderCount, hcAt, hn, span.ValInt, int64(hc))
	t.LinkKids(parent, rn, rn)
	return true
}

// setRow fills every field of row r as Add does for a leaf (or a group
// whose First, Last and Index the caller then sets), with its length,
// value kind and integer value.
func setRow(r *span.Row, parent, next span.ID, d *span.Desc, off, n int, val span.ValueKind, v int64) {
	r.Int, r.Prefix = v, 0
	r.Off, r.Len, r.VOff, r.VLen = int32(off), int32(n), 0, 0
	r.Parent, r.First, r.Last, r.Next = parent, span.None, span.None, next
	r.Desc, r.Index, r.Aux = d.ID(), -1, 0
	r.Val, r.Enc, r.Cat, r.Null = val, span.EncNone, span.CatRecord, false
}

// setBlob fills row r for blob x of b as blob does; with b nil (a header
// key, always a string) its bytes are not checked for text.
func setBlob(r *span.Row, parent, next span.ID, d *span.Desc, x blobAt, b []byte) {
	setRow(r, parent, next, d, x.off, x.end-x.off, span.ValBytes, 0)
	r.Enc, r.Prefix = span.EncVarint, int64(x.l)
	if x.l < 0 {
		r.Null = true
		return
	}
	vs := x.off + x.n
	r.VOff, r.VLen = int32(vs), x.l
	// A first byte that no text starts with (most binary values) is
	// told here, without the call.
	if b != nil && (x.l == 0 || textClass[b[vs]] != textBad && IsText(b[vs:vs+int(x.l)])) {
		r.Val = span.ValText
	}
}
