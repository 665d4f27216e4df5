// Package logseg reads the entries of a partition's log segment, as a
// broker stores them on disk: a .log file in a partition's directory
// (<topic>-<partition>/00000000000000000000.log), or a KRaft snapshot
// (__cluster_metadata-0/<offset>-<epoch>.checkpoint). Such a file is a
// records area: record batches (or legacy message sets) one after
// another, each an int64 base offset, an int32 length and that many
// bytes. [Reader] hands them out one at a time, streaming, so that a
// segment of any size is read in memory proportional to its largest
// entry; [Topic] names the topic of a segment from its directory.
package logseg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultMaxEntry is the largest entry read whole by default: Kafka's
// default socket.request.max.bytes, above any batch a broker accepts with
// its default limits.
const DefaultMaxEntry = 100 << 20

// headerSize is an entry's base offset and length; minLength is the
// shortest length that reaches the magic byte (a partition leader epoch
// or CRC, then the magic), which every entry has.
const (
	headerSize = 12
	minLength  = 5
)

// ErrCorrupt is wrapped by the error of an entry whose length cannot be
// an entry's: the rest of the file is not read as entries (Kafka's log
// reader stops there too). A preallocated segment's zero fill reads so.
var ErrCorrupt = errors.New("not a log entry")

// Entry is one entry of a segment.
type Entry struct {
	// Offset is where the entry starts in the file.
	Offset int64
	// Bytes are the entry, its header included; nil for an entry skipped
	// (Skipped). Valid until the next call of Next.
	Bytes []byte
	// Size is the entry's size in the file, its header included: len(Bytes),
	// or what was skipped.
	Size int64
	// Partial: the file ends inside the entry (a segment being written, or
	// cut); Bytes are what it holds.
	Partial bool
	// Skipped: the entry is longer than the reader's Max and was read past,
	// not kept.
	Skipped bool
}

// Reader reads a segment's entries from R.
type Reader struct {
	r   io.Reader
	off int64
	buf []byte
	// Max is the largest entry (header included) that Next returns whole;
	// a longer one is read past and returned as Skipped. Zero means
	// DefaultMaxEntry.
	Max int64
	err error
	// rest is the header of the corrupt entry, for Rest.
	rest []byte
}

// NewReader returns a Reader of the segment r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// Offset returns how many bytes of the file have been read.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next entry. At the end of the file it returns io.EOF;
// after an entry whose length cannot be one it returns an error wrapping
// ErrCorrupt that names its offset and length, and the caller may count
// the rest with Rest. A read error is returned as it is, with the offset.
func (r *Reader) Next() (Entry, error) {
	if r.err != nil {
		return Entry{}, r.err
	}
	start := r.off
	var head [headerSize]byte
	n, err := io.ReadFull(r.r, head[:])
	r.off += int64(n)
	switch {
	case err == io.EOF:
		r.err = io.EOF
		return Entry{}, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.err = io.EOF
		r.buf = append(r.buf[:0], head[:n]...)
		return Entry{Offset: start, Bytes: r.buf, Size: int64(n), Partial: true}, nil
	case err != nil:
		r.err = fmt.Errorf("reading the entry at file offset %d: %w", start, err)
		return Entry{}, r.err
	}
	length := int64(int32(binary.BigEndian.Uint32(head[8:])))
	if length < minLength {
		r.err = fmt.Errorf("%w: the entry at file offset %d has length %d (base offset %d); an entry's length is at least %d",
			ErrCorrupt, start, length, int64(binary.BigEndian.Uint64(head[:])), minLength)
		r.rest = append([]byte(nil), head[:]...)
		return Entry{}, r.err
	}
	size := headerSize + length
	limit := r.Max
	if limit <= 0 {
		limit = DefaultMaxEntry
	}
	if size > limit {
		n, err := io.CopyN(io.Discard, r.r, length)
		r.off += n
		if err != nil && err != io.EOF {
			r.err = fmt.Errorf("reading the entry at file offset %d: %w", start, err)
			return Entry{}, r.err
		}
		if err == io.EOF {
			r.err = io.EOF
		}
		return Entry{Offset: start, Size: headerSize + n, Skipped: true, Partial: n < length}, nil
	}
	// The room grows with the bytes read (doubling, from growStep), not
	// to the length at once: a length that claims more than the file
	// holds costs what the file holds.
	b := append(r.buf[:0], head[:]...)
	for int64(len(b)) < size {
		want := min(size, max(int64(len(b))*2, growStep))
		if int64(cap(b)) < want {
			b = append(b[:cap(b)], make([]byte, want-int64(cap(b)))...)[:len(b)]
		}
		n, err := io.ReadFull(r.r, b[len(b):want])
		r.off += int64(n)
		b = b[:len(b)+n]
		r.buf = b
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
			r.err = io.EOF
			return Entry{Offset: start, Bytes: b, Size: int64(len(b)), Partial: true}, nil
		case err != nil:
			r.err = fmt.Errorf("reading the entry at file offset %d: %w", start, err)
			return Entry{}, r.err
		}
	}
	r.buf = b
	return Entry{Offset: start, Bytes: b, Size: size}, nil
}

// growStep is the least room an entry's bytes are read into at a time.
const growStep = 1 << 20

// Rest reads the rest of the file after Next returned an ErrCorrupt
// error, and returns how many bytes it holds from the corrupt entry's
// start (its header included) and whether they are all zero (a
// preallocated segment's fill).
func (r *Reader) Rest() (n int64, zero bool, err error) {
	zero = allZero(r.rest)
	n = int64(len(r.rest))
	buf := make([]byte, 64<<10)
	for {
		m, err := r.r.Read(buf)
		n += int64(m)
		r.off += int64(m)
		zero = zero && allZero(buf[:m])
		if err == io.EOF {
			return n, zero, nil
		}
		if err != nil {
			return n, zero, err
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// segmentName matches the file names of log segments and KRaft snapshots.
var segmentName = regexp.MustCompile(`^[0-9]{20}\.log$|^[0-9]{20}-[0-9]{10}\.checkpoint$`)

// IsSegmentName reports whether path's file name is a log segment's
// (twenty digits, .log) or a KRaft snapshot's (twenty digits, a dash, ten
// digits, .checkpoint).
func IsSegmentName(path string) bool { return segmentName.MatchString(filepath.Base(path)) }

// companionName matches the files a broker keeps beside a partition's
// segments, which hold no records.
var companionName = regexp.MustCompile(`^[0-9]{20}\.(index|timeindex|txnindex|snapshot)(\.deleted|\.cleaned|\.swap)?$|^leader-epoch-checkpoint$|^partition\.metadata$`)

// companionKinds says what each companion file holds.
var companionKinds = map[string]string{
	"index":                   "a segment's offset index",
	"timeindex":               "a segment's time index",
	"txnindex":                "a segment's aborted-transaction index",
	"snapshot":                "a producer-state snapshot",
	"leader-epoch-checkpoint": "the partition's leader-epoch checkpoint",
	"partition.metadata":      "the partition's metadata (its topic id)",
}

// Companion reports, for a file a broker keeps beside a partition's
// segments (00000000000000000000.index, .timeindex, .txnindex,
// .snapshot, leader-epoch-checkpoint, partition.metadata), what it holds
// ("a segment's offset index"); false for any other name. None of them
// holds records: decoding one as frames or as a segment reads garbage.
func Companion(path string) (string, bool) {
	base := filepath.Base(path)
	m := companionName.FindStringSubmatch(base)
	if m == nil {
		return "", false
	}
	if m[1] != "" {
		return companionKinds[m[1]], true
	}
	return companionKinds[base], true
}

// partitionDir matches a partition directory's name: the topic, a dash,
// the partition number (and a suffix a broker adds to a directory it is
// deleting or moving, which the topic is read without).
var partitionDir = regexp.MustCompile(`^(.+)-([0-9]+)(\.[0-9a-f]{32}-(delete|future|stray))?$`)

// Topic returns the topic of the segment at path, from its directory's
// name (<topic>-<partition>), and false when the directory is not named
// so.
func Topic(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	m := partitionDir.FindStringSubmatch(filepath.Base(filepath.Dir(abs)))
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return "", false
	}
	return m[1], true
}
