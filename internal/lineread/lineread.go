// Package lineread reads the lines of JSON-lines input (a proxy's log,
// decode's JSON output) with bounded memory: input that has no line ends
// (a device, a binary file given in place of a log) cannot make one line
// grow without bound.
package lineread

import (
	"bufio"
	"errors"
	"fmt"
)

// ErrTooLong is returned for a line longer than the limit.
var ErrTooLong = errors.New("line longer than the limit")

// ObjectLine reads one line of r, its newline included, as
// r.ReadBytes('\n') does, with two exceptions for a line that cannot be a
// JSON object: one whose first byte other than white space is not "{"
// is returned up to that byte, at once (parsing it fails there); one of
// more than limit bytes is returned cut at limit bytes with [ErrTooLong]. In
// both cases the rest of the line is left unread: the caller stops there.
func ObjectLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return line, err
		}
		if len(line) >= limit {
			r.UnreadByte()
			return line, fmt.Errorf("%w of %d bytes", ErrTooLong, limit)
		}
		line = append(line, c)
		switch c {
		case '\n':
			return line, nil
		case ' ', '\t', '\r':
		case '{':
			// The rest of the object: whole buffers at a time.
			for {
				chunk, err := r.ReadSlice('\n')
				if len(line)+len(chunk) > limit {
					n := limit - len(line)
					line = append(line, chunk[:n]...)
					return line, fmt.Errorf("%w of %d bytes", ErrTooLong, limit)
				}
				line = append(line, chunk...)
				if !errors.Is(err, bufio.ErrBufferFull) {
					return line, err
				}
			}
		default:
			return line, nil
		}
	}
}
