package logseg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"testing/iotest"
)

// entry makes an entry of base offset base with body bytes after its
// header (their content does not matter to the reader).
func entry(base int64, body int) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(base))
	b = binary.BigEndian.AppendUint32(b, uint32(body))
	for i := range body {
		b = append(b, byte(i+1))
	}
	return b
}

type got struct {
	off, size        int64
	n                int
	partial, skipped bool
}

// readAll reads every entry of seg, one byte at a time from the reader
// (so that no read returns a whole entry), and the error that ended it.
func readAll(t *testing.T, seg []byte, max int64) ([]got, *Reader, error) {
	t.Helper()
	r := NewReader(iotest.OneByteReader(bytes.NewReader(seg)))
	r.Max = max
	var out []got
	for {
		e, err := r.Next()
		if err != nil {
			return out, r, err
		}
		if !e.Skipped && int64(len(e.Bytes)) != e.Size {
			t.Errorf("entry at %d: %d bytes, size %d", e.Offset, len(e.Bytes), e.Size)
		}
		if !e.Skipped && !bytes.Equal(e.Bytes, seg[e.Offset:e.Offset+e.Size]) {
			t.Errorf("entry at %d: bytes differ from the file's", e.Offset)
		}
		out = append(out, got{e.Offset, e.Size, len(e.Bytes), e.Partial, e.Skipped})
	}
}

func TestReader(t *testing.T) {
	a, b, c := entry(0, 60), entry(3, 5), entry(9, 200)
	seg := append(append(append([]byte(nil), a...), b...), c...)
	ents, r, err := readAll(t, seg, 0)
	want := []got{{0, 72, 72, false, false}, {72, 17, 17, false, false}, {89, 212, 212, false, false}}
	if err != io.EOF || len(ents) != 3 || ents[0] != want[0] || ents[1] != want[1] || ents[2] != want[2] || r.Offset() != int64(len(seg)) {
		t.Fatalf("whole: %+v, %v; want %+v and EOF at %d", ents, err, want, len(seg))
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after EOF: %v", err)
	}

	// Cut inside the last entry's body, and inside a header.
	for _, cut := range []int{len(seg) - 100, len(a) + len(b) + 7} {
		ents, _, err := readAll(t, seg[:cut], 0)
		last := ents[len(ents)-1]
		if err != io.EOF || len(ents) != 3 || !last.partial || last.off != 89 || last.size != int64(cut-89) {
			t.Errorf("cut at %d: %+v, %v; want the third entry partial, %d bytes", cut, ents, err, cut-89)
		}
	}

	// Longer than Max: read past, counted, and the next entry read.
	ents, _, err = readAll(t, seg, 100)
	if err != io.EOF || len(ents) != 3 || !ents[2].skipped || ents[2].size != 212 || ents[2].n != 0 || ents[0].skipped {
		t.Errorf("max 100: %+v, %v; want the third entry skipped, 212 bytes", ents, err)
	}
	ents, _, _ = readAll(t, seg[:len(seg)-10], 100)
	if last := ents[2]; !last.skipped || !last.partial || last.size != 202 {
		t.Errorf("max 100, cut: %+v; want the third entry skipped and partial, 202 bytes", last)
	}

	// A preallocated segment's zero fill, and a negative length.
	zero := append(append([]byte(nil), a...), make([]byte, 4096)...)
	ents, r, err = readAll(t, zero, 0)
	if len(ents) != 1 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("zero fill: %+v, %v; want one entry then ErrCorrupt", ents, err)
	}
	if n, z, err := r.Rest(); n != 4096 || !z || err != nil {
		t.Errorf("zero fill: rest %d bytes, zero %v, %v; want 4096, true", n, z, err)
	}
	neg := append(append([]byte(nil), a...), entry(7, 0)...)
	binary.BigEndian.PutUint32(neg[len(a)+8:], 0xffffff00)
	neg = append(neg, 1, 2, 3)
	_, r, err = readAll(t, neg, 0)
	if !errors.Is(err, ErrCorrupt) || err.Error() != "not a log entry: the entry at file offset 72 has length -256 (base offset 7); an entry's length is at least 5" {
		t.Errorf("negative length: %v", err)
	}
	if n, z, _ := r.Rest(); n != 15 || z {
		t.Errorf("negative length: rest %d bytes, zero %v; want 15, false", n, z)
	}
}

func TestNames(t *testing.T) {
	for path, want := range map[string]bool{
		"00000000000000000000.log":                         true,
		"/data/orders-0/00000000000000123456.log":          true,
		"00000000000000000100-0000000003.checkpoint":       true,
		"00000000000000000000.index":                       false,
		"0000000000000000000.log":                          false,
		"replication-offset-checkpoint":                    false,
		"00000000000000000000.log.deleted":                 false,
		"/x/__cluster_metadata-0/00000000000000000100.log": true,
	} {
		if got := IsSegmentName(path); got != want {
			t.Errorf("IsSegmentName(%q) = %v", path, got)
		}
	}
	for path, want := range map[string]string{
		filepath.Join("data", "__consumer_offsets-12", "00000000000000000000.log"):                            "__consumer_offsets",
		filepath.Join("data", "my-topic-3", "00000000000000000000.log"):                                       "my-topic",
		filepath.Join("data", "orders-0.0123456789abcdef0123456789abcdef-delete", "00000000000000000000.log"): "orders",
		filepath.Join("data", "orders", "00000000000000000000.log"):                                           "",
		filepath.Join("data", "-1", "00000000000000000000.log"):                                               "",
	} {
		got, ok := Topic(path)
		if got != want || ok != (want != "") {
			t.Errorf("Topic(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

// FuzzReader: whatever the bytes, the entries Next returns and what Rest
// counts after them tile the input, and every entry kept is the input's
// bytes at its offset.
func FuzzReader(f *testing.F) {
	f.Add(append(entry(0, 60), entry(3, 5)...), int64(0))
	f.Add(append(entry(0, 60), make([]byte, 30)...), int64(50))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 7}, int64(0))
	f.Fuzz(func(t *testing.T, seg []byte, max int64) {
		r := NewReader(bytes.NewReader(seg))
		r.Max = max % 1024
		var at int64
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if errors.Is(err, ErrCorrupt) {
				n, _, rerr := r.Rest()
				if rerr != nil {
					t.Fatal(rerr)
				}
				at += n
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Offset != at || e.Size <= 0 {
				t.Fatalf("entry at %d of size %d, want at %d", e.Offset, e.Size, at)
			}
			if !e.Skipped && !bytes.Equal(e.Bytes, seg[at:at+e.Size]) {
				t.Fatalf("entry at %d: bytes differ", at)
			}
			at += e.Size
		}
		if at != int64(len(seg)) || r.Offset() != at {
			t.Fatalf("entries and rest cover %d bytes (reader at %d) of %d", at, r.Offset(), len(seg))
		}
	})
}

// TestReaderLyingLength: an entry whose length claims far more than the
// file holds (a 20-byte file saying 100 MiB, under --max-entry) costs
// memory for what is there, not for what it claims: the room grows as
// bytes arrive.
func TestReaderLyingLength(t *testing.T) {
	seg := entry(0, 8)
	binary.BigEndian.PutUint32(seg[8:], 100<<20-100)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := NewReader(bytes.NewReader(seg))
	e, err := r.Next()
	runtime.ReadMemStats(&after)
	if err != nil || !e.Partial || !bytes.Equal(e.Bytes, seg) {
		t.Fatalf("%+v, %v", e, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("%d bytes allocated for a %d-byte file", n, len(seg))
	}
	// A long entry that is all there is still read whole.
	long := entry(5, 3<<20)
	r = NewReader(iotest.HalfReader(bytes.NewReader(long)))
	if e, err := r.Next(); err != nil || e.Partial || !bytes.Equal(e.Bytes, long) {
		t.Fatalf("long entry: partial %v, %d bytes, %v", e.Partial, len(e.Bytes), err)
	}
}

// TestCompanion: the files a broker keeps beside a partition's segments
// are named for what they hold; segments, snapshots and other names are
// not companions.
func TestCompanion(t *testing.T) {
	for name, want := range map[string]string{
		"orders-0/00000000000000000000.index":          "a segment's offset index",
		"00000000000000001234.timeindex":               "a segment's time index",
		"00000000000000000000.txnindex":                "a segment's aborted-transaction index",
		"00000000000000000042.snapshot":                "a producer-state snapshot",
		"00000000000000000000.index.deleted":           "a segment's offset index",
		"orders-0/leader-epoch-checkpoint":             "the partition's leader-epoch checkpoint",
		"partition.metadata":                           "the partition's metadata (its topic id)",
		"00000000000000000000.log":                     "",
		"00000000000000000000-0000000001.checkpoint":   "",
		"frames.index":                                 "",
		"0000000000000000000.index":                    "", // 19 digits
		"orders-0/00000000000000000000.index.swap.txt": "",
	} {
		got, ok := Companion(name)
		if got != want || ok != (want != "") {
			t.Errorf("Companion(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
