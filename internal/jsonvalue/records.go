package jsonvalue

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// records reads a records field given as a batch object (c is '{') or an
// array of them (c is '['), building their uncompressed RecordBatch v2
// bytes one after the other.
//
// It reads the value twice: once to measure the bytes (and to find its
// errors), then to build them into a slice of that size. A batch object
// of 2 bytes of JSON is a 61-byte batch: the bytes are the value, and
// what they take beyond it is not a slice grown again and again.
func (r *reader) records(c byte) (codec.Value, error) {
	at, room := r.pos, r.room
	r.measure, r.size = true, 0
	_, err := r.recordsPass(c, nil)
	r.measure = false
	if r.fail != nil || err != nil {
		return codec.Value{}, err
	}
	r.pos, r.room = at, room
	out, err := r.recordsPass(c, make([]byte, 0, r.size))
	if r.fail != nil || err != nil {
		return codec.Value{}, err
	}
	return codec.BytesValue(out), nil
}

// recordsPass is one read of records: it appends to out, or only counts
// the bytes in r.size when r.measure.
func (r *reader) recordsPass(c byte, out []byte) ([]byte, error) {
	var err error
	if c == '{' {
		out, err = r.batch(out)
	} else {
		if !r.open() {
			return out, nil
		}
		for i := 0; r.nextElem(i); i++ {
			switch {
			case err != nil:
				r.skip()
			case r.peek() != '{':
				err = r.wrongType("a batch object")
			default:
				out, err = r.batch(out)
			}
		}
	}
	return out, err
}

// The integer keys of a batch object, their kinds and defaults.
var (
	batchInts     = [...]string{"baseOffset", "partitionLeaderEpoch", "baseTimestamp", "producerId", "producerEpoch", "baseSequence"}
	batchIntKinds = [...]schema.Kind{schema.KindInt64, schema.KindInt32, schema.KindInt64, schema.KindInt64, schema.KindInt16, schema.KindInt32}
	batchDefaults = [...]int64{0, -1, 0, -1, -1, -1}
)

// batch appends to out the RecordBatch v2 built from the input-only
// object form of a records field:
//
//	{"baseOffset": 0, "partitionLeaderEpoch": -1, "baseTimestamp": 0,
//	 "producerId": -1, "producerEpoch": -1, "baseSequence": -1,
//	 "transactional": false,
//	 "records": [{"key": "k", "value": "v", "timestampDelta": 0,
//	              "headers": [{"key": "h", "value": "x"}]}]}
//
// Every key is optional (the defaults are shown). Keys and values are
// strings, {"hex": "..."} for other bytes, or null. The batch's
// lastOffsetDelta, maxTimestamp, recordsCount, batchLength and CRC are
// computed; record offsetDeltas are 0, 1, 2, ...
//
// The records are built as they are read, into out after room for the
// batch's header, which is written at the end. Of its errors, those of
// its keys come first, in key order, then those of its records.
func (r *reader) batch(out []byte) ([]byte, error) {
	start := len(out)
	vals := batchDefaults
	transactional := false
	n := 0 // records built
	out = r.put(out, zeroHeader[:])
	recErr := r.spend(records.BatchHeaderSize)
	keyErr := r.members(func(k keyRef, failed bool) (err error) {
		switch j := r.batchInt(k); {
		case j >= 0:
			vals[j], err = r.integer(batchIntKinds[j])
		case r.keyIs(k, "transactional"):
			transactional, err = r.boolean()
		case r.keyIs(k, "records"):
			switch {
			case r.peek() != '[':
				err = r.wrongType("an array of records")
			case failed || recErr != nil:
				r.skip()
			default:
				out, n, recErr = r.recordList(out)
			}
		default:
			err = r.errorAt(fmt.Errorf("%w: a records object has baseOffset, partitionLeaderEpoch, baseTimestamp, producerId, producerEpoch, baseSequence, transactional and records", ErrUnknownField))
			r.skip()
		}
		return err
	})
	switch {
	case r.fail != nil:
		return out, nil
	case keyErr != nil:
		return out, keyErr
	case recErr != nil:
		return out, recErr
	case r.measure:
		return out, nil
	}
	b := records.Batch{
		BaseOffset: vals[0], PartitionLeaderEpoch: int32(vals[1]), BaseTimestamp: vals[2],
		ProducerID: vals[3], ProducerEpoch: int16(vals[4]), BaseSequence: int32(vals[5]),
		NumRecords: int32(n), LastOffsetDelta: max(int32(n)-1, 0),
	}
	if transactional {
		b.Attributes |= 16
	}
	b.MaxTimestamp = maxTimestamp(out[start+records.BatchHeaderSize:], n, b.BaseTimestamp)
	r.writeBatchHeader(out[start:], &b)
	return out, nil
}

// zeroHeader is the room for a batch's header, written once its records are.
var zeroHeader [records.BatchHeaderSize]byte

// put appends b to out, or counts it when r.measure.
func (r *reader) put(out, b []byte) []byte {
	if r.measure {
		r.size += len(b)
		return out
	}
	return append(out, b...)
}

// batchInt is the index of k in batchInts, -1 when it is not one.
func (r *reader) batchInt(k keyRef) int {
	for j, name := range batchInts {
		if r.keyIs(k, name) {
			return j
		}
	}
	return -1
}

// boolean reads true or false.
func (r *reader) boolean() (bool, error) {
	switch r.peek() {
	case 't':
		return r.literal("true"), nil
	case 'f':
		r.literal("false")
		return false, nil
	}
	return false, r.wrongType("true or false")
}

// spend takes n bytes just built from the room records built from batch
// objects have: past it, the error at the current path.
func (r *reader) spend(n int) error {
	r.room -= int64(n)
	if r.room < 0 {
		return r.errorAt(fmt.Errorf("%w: the records built from batch objects pass %d bytes, more than a frame holds", ErrRange, r.limit))
	}
	return nil
}

// maxTimestamp is the latest of the n records' timestamps in area (the
// first's when none is later, earlier than base when every delta is
// negative).
func maxTimestamp(area []byte, n int, base int64) int64 {
	maxTS := base
	for i := range n {
		l, w := binary.Varint(area)
		body := area[w : w+int(l)]
		delta, _ := binary.Varint(body[1:]) // after the attributes
		if i == 0 || base+delta > maxTS {
			maxTS = base + delta
		}
		area = area[w+int(l):]
	}
	return maxTS
}

// writeBatchHeader writes b's header at the start of batch, whose records
// follow it, with the batch's length and CRC, as records.AppendBatch
// does.
func (r *reader) writeBatchHeader(batch []byte, b *records.Batch) {
	r.hdr = records.AppendBatch(r.hdr[:0], b)
	copy(batch, r.hdr)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	const crcAt = 17 // after baseOffset, batchLength, partitionLeaderEpoch and magic
	binary.BigEndian.PutUint32(batch[crcAt:], records.CRC32C(batch[crcAt+4:]))
}

// recordList reads the "records" array of a batch object, appending each
// record, with its length, to out; n is the count.
func (r *reader) recordList(out []byte) (_ []byte, n int, err error) {
	if !r.open() {
		return out, 0, nil
	}
	for i := 0; r.nextElem(i); i++ {
		if err != nil {
			r.skip()
			continue
		}
		if r.peek() != '{' {
			err = r.wrongType("an object")
			continue
		}
		if err = r.record(int32(i)); err != nil {
			continue
		}
		r.lenBuf = wire.AppendVarint(r.lenBuf[:0], int32(len(r.rec)))
		out = r.put(r.put(out, r.lenBuf), r.rec)
		if err = r.spend(len(r.lenBuf) + len(r.rec)); err != nil {
			continue
		}
		n++
	}
	return out, n, err
}

// A record's key and value, a header's key and value, in reader.blobs.
const (
	recKey = iota
	recValue
	hdrKey
	hdrValue
)

// record builds one Record v2 without its length prefix into r.rec. Of its
// errors, those of its keys come first, in key order, then those of its
// headers.
func (r *reader) record(offsetDelta int32) error {
	keyNull, valueNull := true, true
	var tsDelta int64
	var hdrErr error
	nh := 0
	r.hdrs = r.hdrs[:0]
	keyErr := r.members(func(k keyRef, failed bool) (err error) {
		switch {
		case r.keyIs(k, "key"):
			keyNull, err = r.blob(recKey)
		case r.keyIs(k, "value"):
			valueNull, err = r.blob(recValue)
		case r.keyIs(k, "timestampDelta"):
			tsDelta, err = r.integer(schema.KindInt64)
		case r.keyIs(k, "headers"):
			switch {
			case r.peek() != '[':
				err = r.wrongType("an array of {\"key\", \"value\"} objects")
			case failed || hdrErr != nil:
				r.skip()
			default:
				nh, hdrErr = r.headers()
			}
		default:
			err = r.errorAt(fmt.Errorf("%w: a record has key, value, timestampDelta and headers", ErrUnknownField))
			r.skip()
		}
		return err
	})
	switch {
	case r.fail != nil:
		return nil
	case keyErr != nil:
		return keyErr
	case hdrErr != nil:
		return hdrErr
	}
	out := append(r.rec[:0], 0) // attributes
	out = wire.AppendVarlong(out, tsDelta)
	out = wire.AppendVarint(out, offsetDelta)
	out = appendBlob(out, r.blobs[recKey], keyNull)
	out = appendBlob(out, r.blobs[recValue], valueNull)
	out = wire.AppendVarint(out, int32(nh))
	r.rec = append(out, r.hdrs...)
	return nil
}

// headers reads a record's headers into r.hdrs, returning their count.
func (r *reader) headers() (n int, err error) {
	if !r.open() {
		return 0, nil
	}
	for i := 0; r.nextElem(i); i++ {
		if err != nil {
			r.skip()
			continue
		}
		if r.peek() != '{' {
			err = r.wrongType("an object")
			continue
		}
		if err = r.header(); err == nil {
			n++
		}
	}
	return n, err
}

// header reads one {"key": ..., "value": ...} and appends it to r.hdrs.
func (r *reader) header() error {
	keyNull, valueNull := true, true
	keyErr := r.members(func(k keyRef, _ bool) (err error) {
		switch {
		case r.keyIs(k, "key"):
			keyNull, err = r.blob(hdrKey)
		case r.keyIs(k, "value"):
			valueNull, err = r.blob(hdrValue)
		default:
			err = r.errorAt(fmt.Errorf("%w: a header has key and value", ErrUnknownField))
			r.skip()
		}
		return err
	})
	switch {
	case r.fail != nil:
		return nil
	case keyErr != nil:
		return keyErr
	case keyNull:
		return &Error{Path: r.pathString() + ".key", Err: fmt.Errorf("%w: a header key is never null", ErrNull)}
	}
	r.hdrs = appendBlob(r.hdrs, r.blobs[hdrKey], false)
	r.hdrs = appendBlob(r.hdrs, r.blobs[hdrValue], valueNull)
	return nil
}

// blob reads a record's or header's key or value into r.blobs[i]: a
// string, {"hex": ...} or null (then null is true).
func (r *reader) blob(i int) (null bool, err error) {
	const want = "a string, {\"hex\": ...} or null"
	switch c := r.peek(); c {
	case 'n':
		r.literal("null")
		return true, nil
	case '"':
		if r.text() {
			r.blobs[i] = append(r.blobs[i][:0], r.str...)
		}
		return false, nil
	case '{':
		h, ok := r.hexObject()
		if r.fail != nil {
			return false, nil
		}
		if !ok {
			return false, r.typeErr(r.pathString(), want, c)
		}
		b := r.blobs[i][:0]
		if cap(b) < len(h)/2 {
			b = make([]byte, len(h)/2)
		}
		n, err := hex.Decode(b[:len(h)/2], h)
		if err != nil {
			return false, &Error{Path: r.pathString() + ".hex", Err: fmt.Errorf("%w: not hex: %v", ErrType, err)}
		}
		r.blobs[i] = b[:n]
		return false, nil
	}
	return false, r.wrongType(want)
}

func appendBlob(dst, b []byte, null bool) []byte {
	if null {
		return wire.AppendVarint(dst, -1)
	}
	dst = wire.AppendVarint(dst, int32(len(b)))
	return append(dst, b...)
}

// members reads the object at the reader (of a batch, record or header),
// calling member for each of its keys, in order, with the reader at the
// key's value, which member reads or skips. The object's error is the one
// of the first key, in key order, whose member failed: once one has,
// member is called only for keys before it (failed then says that one
// has), and the values of the others are skipped. A syntax error is
// r.fail's, not returned.
func (r *reader) members(member func(k keyRef, failed bool) error) error {
	var keyErr error
	var errKey keyRef
	ks := keySet{start: len(r.keys)}
	if !r.open() {
		return nil
	}
	for i := 0; ; i++ {
		k, ok := r.key(i, &ks)
		if !ok {
			return keyErr
		}
		if keyErr != nil && !r.keyLess(k, errKey) {
			r.skip()
			continue
		}
		if err := member(k, keyErr != nil); err != nil {
			keyErr, errKey = err, k
		}
	}
}
