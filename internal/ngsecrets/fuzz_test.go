package ngsecrets_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/ngsecrets"
)

// FuzzSniff: whatever the input and however it is read, the bytes out
// are the bytes in, nothing panics, fn sees what a plain walk of the whole
// file finds (refParse) and Err agrees with it, no secrets are longer than
// the limit, and the secrets buffer never holds more than twice the bytes
// that have arrived (nor more than the secrets length announced).
func FuzzSniff(f *testing.F) {
	s := sample()
	f.Add(s.buf, uint8(0), uint16(0))
	f.Add(s.buf, uint8(1), uint16(40))
	f.Add(s.buf[:s.dsbs[3].start+9], uint8(5), uint16(0))
	f.Add(s.buf[:len(s.buf)-1], uint8(13), uint16(0))
	le := binary.LittleEndian
	lying := (&ngFile{}).section(le).buf
	lying = le.AppendUint32(lying, 0xA)
	lying = le.AppendUint32(lying, 0xFFFFFFFC)
	lying = le.AppendUint32(lying, ngsecrets.TypeTLSKeyLog)
	lying = le.AppendUint32(lying, 0x1000)
	f.Add(append(lying, keylogLine...), uint8(2), uint16(0))
	f.Add((&ngFile{}).section(binary.BigEndian).secrets(ngsecrets.TypeWireGuard, "wg", "c").buf, uint8(3), uint16(1))
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0}, uint8(0), uint16(0))
	f.Add([]byte{0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A}, uint8(0), uint16(0))

	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, limit uint16) {
		var calls []call
		r := ngsecrets.Sniff(&chunkReader{bytes.NewReader(in), int(chunk) + 1}, func(typ uint32, data []byte) error {
			calls = append(calls, call{typ, string(data)})
			return nil
		})
		r.MaxSecrets = int(limit)
		lim := ngsecrets.DefaultMaxSecrets
		if limit > 0 {
			lim = int(limit)
		}
		var out []byte
		buf := make([]byte, 64)
		for {
			n, err := r.Read(buf)
			out = append(out, buf[:n]...)
			if c, got, want := ngsecrets.SecretsBuffer(r); c > 0 && (int64(c) > want || c > max(512, 2*got)) {
				t.Fatalf("secrets buffer of %d for %d bytes arrived of %d", c, got, want)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("bytes out differ from bytes in")
		}
		for _, c := range calls {
			if len(c.data) > lim {
				t.Fatalf("secrets of %d bytes over the limit %d", len(c.data), lim)
			}
		}
		wantCalls, wantOff, wantErr := refParse(in, lim)
		if !slices.Equal(calls, wantCalls) {
			t.Fatalf("calls %v, want %v", calls, wantCalls)
		}
		checkErr(t, r.Err(), wantOff, wantErr)
	})
}
