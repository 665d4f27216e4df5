package jsonvalue

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// buildBatch builds one uncompressed RecordBatch v2 from the input-only
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
func buildBatch(obj map[string]any, path string) ([]byte, error) {
	b := records.Batch{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	ints := map[string]*int64{}
	var base, ple, pid, pepoch, seq int64 = 0, -1, -1, -1, -1
	var baseTS int64
	ints["baseOffset"], ints["partitionLeaderEpoch"], ints["producerId"] = &base, &ple, &pid
	ints["producerEpoch"], ints["baseSequence"], ints["baseTimestamp"] = &pepoch, &seq, &baseTS
	kinds := map[string]schema.Kind{
		"baseOffset": schema.KindInt64, "partitionLeaderEpoch": schema.KindInt32,
		"producerId": schema.KindInt64, "producerEpoch": schema.KindInt16,
		"baseSequence": schema.KindInt32, "baseTimestamp": schema.KindInt64,
	}
	var recs []any
	for _, k := range sortedKeys(obj) {
		x := obj[k]
		p := path + "." + k
		switch {
		case ints[k] != nil:
			v, err := intIn(x, p, kinds[k])
			if err != nil {
				return nil, err
			}
			*ints[k] = v
		case k == "transactional":
			t, ok := x.(bool)
			if !ok {
				return nil, typeErr(p, "true or false", x)
			}
			if t {
				b.Attributes |= 16
			}
		case k == "records":
			arr, ok := x.([]any)
			if !ok {
				return nil, typeErr(p, "an array of records", x)
			}
			recs = arr
		default:
			return nil, &Error{Path: p, Err: fmt.Errorf("%w: a records object has baseOffset, partitionLeaderEpoch, baseTimestamp, producerId, producerEpoch, baseSequence, transactional and records", ErrUnknownField)}
		}
	}
	b.BaseOffset, b.PartitionLeaderEpoch, b.ProducerID = base, int32(ple), pid
	b.ProducerEpoch, b.BaseSequence, b.BaseTimestamp, b.MaxTimestamp = int16(pepoch), int32(seq), baseTS, baseTS
	var area []byte
	for i, x := range recs {
		p := path + ".records[" + strconv.Itoa(i) + "]"
		rec, ok := x.(map[string]any)
		if !ok {
			return nil, typeErr(p, "an object", x)
		}
		body, tsDelta, err := buildRecord(rec, p, int32(i))
		if err != nil {
			return nil, err
		}
		if i == 0 || baseTS+tsDelta > b.MaxTimestamp {
			b.MaxTimestamp = baseTS + tsDelta // the latest record's, earlier than the base when every delta is negative
		}
		area = wire.AppendVarint(area, int32(len(body)))
		area = append(area, body...)
	}
	b.NumRecords = int32(len(recs))
	b.LastOffsetDelta = max(int32(len(recs))-1, 0)
	b.Records = area
	return records.AppendBatch(nil, &b), nil
}

// intIn reads an integer of kind k, in any form a body's integers take
// (1e3, 1000.0), with a body's errors.
func intIn(x any, path string, k schema.Kind) (int64, error) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, typeErr(path, "an integer", x)
	}
	v, err := parseInteger(n.String())
	if err != nil {
		return 0, &Error{Path: path, Err: fmt.Errorf("%w: %s is not %s %s (%v)", ErrRange, n, article(k.String()), k, err)}
	}
	if lo, hi := intRange(k); v < lo || v > hi {
		return 0, &Error{Path: path, Err: fmt.Errorf("%w: %d is not %s %s (%d..%d)", ErrRange, v, article(k.String()), k, lo, hi)}
	}
	return v, nil
}

// sortedKeys returns obj's keys in order, so that of two bad keys the
// same one is named every time.
func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

// buildRecord writes one Record v2 without its length prefix.
func buildRecord(rec map[string]any, path string, offsetDelta int32) ([]byte, int64, error) {
	var key, value []byte
	keyNull, valueNull := true, true
	var tsDelta int64
	var headers []any
	for _, k := range sortedKeys(rec) {
		x := rec[k]
		p := path + "." + k
		var err error
		switch k {
		case "key":
			key, keyNull, err = blobIn(x, p)
		case "value":
			value, valueNull, err = blobIn(x, p)
		case "timestampDelta":
			tsDelta, err = intIn(x, p, schema.KindInt64)
		case "headers":
			arr, ok := x.([]any)
			if !ok {
				return nil, 0, typeErr(p, "an array of {\"key\", \"value\"} objects", x)
			}
			headers = arr
		default:
			return nil, 0, &Error{Path: p, Err: fmt.Errorf("%w: a record has key, value, timestampDelta and headers", ErrUnknownField)}
		}
		if err != nil {
			return nil, 0, err
		}
	}
	out := []byte{0} // attributes
	out = wire.AppendVarlong(out, tsDelta)
	out = wire.AppendVarint(out, offsetDelta)
	out = appendBlob(out, key, keyNull)
	out = appendBlob(out, value, valueNull)
	out = wire.AppendVarint(out, int32(len(headers)))
	for i, x := range headers {
		p := path + ".headers[" + strconv.Itoa(i) + "]"
		h, ok := x.(map[string]any)
		if !ok {
			return nil, 0, typeErr(p, "an object", x)
		}
		var hk, hv []byte
		hkNull, hvNull := true, true
		for _, k := range sortedKeys(h) {
			y := h[k]
			var err error
			switch k {
			case "key":
				hk, hkNull, err = blobIn(y, p+".key")
			case "value":
				hv, hvNull, err = blobIn(y, p+".value")
			default:
				err = &Error{Path: p + "." + k, Err: fmt.Errorf("%w: a header has key and value", ErrUnknownField)}
			}
			if err != nil {
				return nil, 0, err
			}
		}
		if hkNull {
			return nil, 0, &Error{Path: p + ".key", Err: fmt.Errorf("%w: a header key is never null", ErrNull)}
		}
		out = appendBlob(out, hk, false)
		out = appendBlob(out, hv, hvNull)
	}
	return out, tsDelta, nil
}

// blobIn reads a record key or value: a string, {"hex": ...} or null.
func blobIn(x any, path string) ([]byte, bool, error) {
	switch y := x.(type) {
	case nil:
		return nil, true, nil
	case string:
		return []byte(y), false, nil
	case map[string]any:
		if h, ok := y["hex"].(string); ok && len(y) == 1 {
			b, err := decodeHex(h, path+".hex")
			return b, false, err
		}
	}
	return nil, false, typeErr(path, "a string, {\"hex\": ...} or null", x)
}

func appendBlob(dst, b []byte, null bool) []byte {
	if null {
		return wire.AppendVarint(dst, -1)
	}
	dst = wire.AppendVarint(dst, int32(len(b)))
	return append(dst, b...)
}
