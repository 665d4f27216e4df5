package jsonr

import "strconv"

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// smallInts holds "0" to "999" (three bytes each, the digits at the
// end): most offsets, sizes and indexes in a line are small.
var smallInts = func() (t [1000][3]byte) {
	for i := range t {
		t[i] = [3]byte{'0' + byte(i/100), '0' + byte(i/10%10), '0' + byte(i%10)}
	}
	return t
}()

// appendInt appends v in decimal, as strconv.AppendInt(dst, v, 10) does:
// values below 1000 from a table (stored byte by byte, not copied), larger ones below 10^10 formatted in
// place (a frame's offsets and sizes), the rest by strconv.
// A single digit (most sizes, many values) is appended inline.
func appendInt(dst []byte, v int64) []byte {
	if uint64(v) < 10 {
		return append(dst, '0'+byte(v))
	}
	return appendIntMore(dst, v)
}

// appendIntMore is appendInt for all but single digits.
func appendIntMore(dst []byte, v int64) []byte {
	switch {
	case v < 0:
		return strconv.AppendInt(dst, v, 10)
	case v < 100:
		d := &smallInts[v]
		return append(dst, d[1], d[2])
	case v < 1000:
		d := &smallInts[v]
		return append(dst, d[0], d[1], d[2])
	case v >= 1e10 || cap(dst)-len(dst) < 10:
		return strconv.AppendInt(dst, v, 10)
	}
	u := uint64(v)
	n := len(dst)
	k := decimalLen(u)
	dst = dst[:n+k]
	d := dst[n : n+k]
	i := k
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		d[i], d[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		d[0], d[1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		d[0] = '0' + byte(u)
	}
	return dst
}

// decimalLen is the number of decimal digits of u (1000 <= u < 10^10).
func decimalLen(u uint64) int {
	switch {
	case u < 10000:
		return 4
	case u < 100000:
		return 5
	case u < 1000000:
		return 6
	case u < 10000000:
		return 7
	case u < 100000000:
		return 8
	case u < 1000000000:
		return 9
	}
	return 10
}
