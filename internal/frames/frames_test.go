package frames

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/wire"
)

// stream is three requests written by kmsg's formatter, back to back.
func stream() ([]byte, [][]byte) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("c"))
	var all []byte
	var each [][]byte
	for i, r := range []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrMetadataRequest(), kmsg.NewPtrHeartbeatRequest()} {
		b := f.AppendRequest(nil, r, int32(i))
		each = append(each, b)
		all = append(all, b...)
	}
	return all, each
}

func TestSplit(t *testing.T) {
	all, each := stream()
	got := Split(all)
	if len(got) != 3 {
		t.Fatalf("%d frames, want 3", len(got))
	}
	off := 0
	for i, f := range got {
		if f.Err != nil || !bytes.Equal(f.Bytes, each[i]) || f.Offset != off {
			t.Errorf("frame %d: %+v", i, f)
		}
		off += len(each[i])
	}
	// A lying last size: claims 1000 bytes.
	bad := append(append([]byte(nil), all...), 0, 0, 0x03, 0xe8, 1, 2)
	got = Split(bad)
	last := got[len(got)-1]
	if len(got) != 4 || !errors.Is(last.Err, wire.ErrFrameSize) || last.Offset != len(all) ||
		!strings.Contains(last.Err.Error(), "size prefix says 1000 bytes follow, only 2 do") || !strings.Contains(last.Err.Error(), "frame 3 at offset") {
		t.Errorf("lying size: %d frames, last %+v", len(got), last)
	}
	for _, tail := range [][]byte{{0, 0}, {0xff, 0xff, 0xff, 0xff, 0}} {
		got = Split(append(append([]byte(nil), all...), tail...))
		if last := got[len(got)-1]; !errors.Is(last.Err, wire.ErrFrameSize) || !bytes.Equal(last.Bytes, tail) {
			t.Errorf("tail %x: %+v", tail, last)
		}
	}
}

func TestAllStopsEarly(t *testing.T) {
	all, each := stream()
	// A lying tail that All must never reach.
	all = append(all, 0x7f, 0xff, 0xff, 0xff)
	n := 0
	for f := range All(all) {
		if f.Err != nil || !bytes.Equal(f.Bytes, each[n]) {
			t.Fatalf("frame %d: %+v", n, f)
		}
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("%d frames before stopping, want 2", n)
	}
}

func TestPeek(t *testing.T) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("c"))
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	b := f.AppendRequest(nil, req, 77)
	key, ver, corr, ok := PeekRequest(b)
	if !ok || key != 3 || ver != 9 || corr != 77 {
		t.Errorf("PeekRequest: %d %d %d %v", key, ver, corr, ok)
	}
	if size, ok := Size(b); !ok || int(size) != len(b)-4 {
		t.Errorf("Size: %d %v, want %d", size, ok, len(b)-4)
	}
	if _, _, _, ok := PeekRequest(b[:11]); ok {
		t.Error("PeekRequest of 11 bytes: ok")
	}
	resp := []byte{0, 0, 0, 6, 0xff, 0xff, 0xff, 0xfe, 0, 0}
	if corr, ok := PeekResponse(resp); !ok || corr != -2 {
		t.Errorf("PeekResponse: %d %v", corr, ok)
	}
	if _, ok := PeekResponse(resp[:7]); ok {
		t.Error("PeekResponse of 7 bytes: ok")
	}
	if _, ok := Size(resp[:3]); ok {
		t.Error("Size of 3 bytes: ok")
	}
}

func TestWhole(t *testing.T) {
	all, each := stream()
	// Fed a byte at a time, Whole finds each frame exactly when its last
	// byte arrives.
	var buf []byte
	var got [][]byte
	for _, c := range all {
		buf = append(buf, c)
		n, err := Whole(buf, 8, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			if n != len(buf) {
				t.Fatalf("a frame of %d bytes found in %d", n, len(buf))
			}
			got = append(got, buf)
			buf = nil
		}
	}
	if len(got) != len(each) {
		t.Fatalf("%d frames, want %d", len(got), len(each))
	}
	for i := range got {
		if !bytes.Equal(got[i], each[i]) {
			t.Errorf("frame %d: %x, want %x", i, got[i], each[i])
		}
	}
	// Out of range as soon as the prefix is there.
	for _, b := range [][]byte{{0, 0, 0, 7}, {0, 0x10, 0, 1}, {0xff, 0xff, 0xff, 0xff}} {
		if _, err := Whole(b, 8, 1<<20); !errors.Is(err, ErrOutOfRange) || !errors.Is(err, wire.ErrFrameSize) {
			t.Errorf("%x: %v", b, err)
		}
	}
	if n, err := Whole([]byte{0, 0, 0}, 8, 1<<20); n != 0 || err != nil {
		t.Errorf("3 bytes: %d %v", n, err)
	}
}

// TestNoAllocationFromSize: a size prefix claiming 2 GiB - 1 with a few
// bytes behind it allocates nothing near that size.
func TestNoAllocationFromSize(t *testing.T) {
	in := []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		if n, err := Whole(in, 0, 1<<31-1); n != 0 || err != nil {
			t.Fatal(n, err)
		}
		if got := Split(in); len(got) != 1 || !errors.Is(got[0].Err, wire.ErrFrameSize) {
			t.Fatal(got)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 2<<20 {
		t.Errorf("allocated %d bytes for 10 lying 7-byte frames", d)
	}
}

func TestPeekClientID(t *testing.T) {
	head := []byte{0, 0, 0, 20, 0, 3, 0, 12, 0, 0, 0, 7}
	for _, tc := range []struct {
		b    []byte
		want string // "-" for nil
	}{
		{append(append([]byte(nil), head...), 0, 3, 'a', 'p', 'p', 9), "app"},
		{append(append([]byte(nil), head...), 0, 0), ""},
		{append(append([]byte(nil), head...), 0xff, 0xff), "-"},     // null
		{append(append([]byte(nil), head...), 0, 5, 'a', 'p'), "-"}, // cut
		{append(append([]byte(nil), head...), 0), "-"},              // no room for the length
	} {
		got := PeekClientID(tc.b)
		if tc.want == "-" && got != nil || tc.want != "-" && (got == nil || *got != tc.want) {
			t.Errorf("PeekClientID(% x) = %v, want %q", tc.b, got, tc.want)
		}
	}
}
