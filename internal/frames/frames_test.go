package frames

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

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

func TestReader(t *testing.T) {
	all, each := stream()
	r := NewReader(iotest.OneByteReader(bytes.NewReader(all)), 1<<20)
	for i := range each {
		b, err := r.Next()
		if err != nil || !bytes.Equal(b, each[i]) {
			t.Fatalf("frame %d: %x, %v", i, b, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
	// Cut inside the last frame.
	r = NewReader(bytes.NewReader(all[:len(all)-3]), 1<<20)
	var err error
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, wire.ErrFrameSize) || !strings.Contains(err.Error(), "the stream ended after") {
		t.Errorf("cut stream: %v", err)
	}
	// Over the limit.
	r = NewReader(bytes.NewReader([]byte{0x10, 0, 0, 0, 1}), 1<<20)
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
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
		r := NewReader(bytes.NewReader(in), 1<<31-1)
		if _, err := r.Next(); !errors.Is(err, wire.ErrFrameSize) {
			t.Fatal(err)
		}
		Split(in)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 2<<20 {
		t.Errorf("allocated %d bytes for 10 lying 7-byte frames", d)
	}
}
