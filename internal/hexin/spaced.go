package hexin

import (
	"fmt"
	"strconv"
	"strings"
)

// A spaced dump is what od -A x -t x1 and hexdump (without -C) write: an
// offset of six or more hex digits, one space, then groups of hex digits
// separated by single spaces (bytes for od, 16-bit words for hexdump),
// "*" for squeezed lines and the total length alone on the last line:
//
//	0000000 0000 1500 2100 0200 0000 0000 0000 0000
//	*
//	0000030 6261 0163 0002
//	0000035
//
// hexdump's words are in the byte order of the machine that wrote them;
// little-endian (x86, arm) is assumed, so "1500" is the bytes 00 15.
// Because a line of plain hex could look like this, the shape is taken
// only when every line fits it and the offsets count the bytes exactly.

type spacedLine struct {
	no     int
	off    int64
	groups []string // nil for "*" and for the final offset
	star   bool
	end    bool
}

// parseSpacedDump returns ok false when the lines are not a spaced dump.
func parseSpacedDump(lines []string, sq *squeeze) (*Dump, bool, error) {
	var sl []spacedLine
	group := 0
	for i, l := range lines {
		t := strings.TrimRight(l, " \t")
		if t == "" {
			continue
		}
		if strings.TrimSpace(t) == "*" {
			if len(sl) == 0 || !sl[len(sl)-1].star { // one "*" says what many do
				sl = append(sl, spacedLine{no: i + 1, star: true})
			}
			continue
		}
		// od -t x1z appends the ASCII column between > and <.
		if j := strings.Index(t, "  >"); j > 0 && strings.HasSuffix(t, "<") {
			t = strings.TrimRight(t[:j], " ")
		}
		fields := strings.Split(t, " ")
		if len(fields[0]) < 6 || len(fields[0]) > 16 || !allHex(fields[0]) {
			return nil, false, nil
		}
		off, err := strconv.ParseUint(fields[0], 16, 63)
		if err != nil {
			return nil, false, nil
		}
		x := spacedLine{no: i + 1, off: int64(off), groups: fields[1:], end: len(fields) == 1}
		for _, g := range x.groups {
			if !allHex(g) || (len(g) != 2 && len(g) != 4) {
				return nil, false, nil
			}
			if group == 0 {
				group = len(g)
			}
			if len(g) != group {
				return nil, false, nil
			}
		}
		sl = append(sl, x)
	}
	if len(sl) < 2 || group == 0 || sl[0].star {
		return nil, false, nil
	}
	// The offsets must count the bytes of the lines between them.
	per := group / 2
	var prev *spacedLine
	star := false
	for i := range sl {
		x := &sl[i]
		if x.star {
			star = true
			continue
		}
		if prev != nil {
			if prev.end {
				return nil, false, nil // a line after the final offset
			}
			n := int64(len(prev.groups) * per)
			step := x.off - prev.off
			switch {
			case star && (n == 0 || step < n || step%n != 0):
				return nil, false, nil
			case !star && !x.end && step != n:
				return nil, false, nil
			case !star && x.end && step != n && !(per == 2 && step == n-1):
				return nil, false, nil
			}
		}
		star = false
		prev = x
	}
	if star {
		return nil, false, nil
	}
	var out, last []byte
	start := sl[0].off
	star = false
	for _, x := range sl {
		if x.star {
			star = true
			continue
		}
		if star {
			var err error
			if out, err = fillSqueezed(out, last, start+int64(len(out)), x.off, x.no, sq); err != nil {
				return nil, true, err
			}
			star = false
		}
		if x.end {
			if end := x.off - start; end < int64(len(out)) {
				out = out[:end] // hexdump's last word padded with a zero byte
			}
			break
		}
		n := len(out)
		for _, g := range x.groups {
			b, _ := strconv.ParseUint(g, 16, 16)
			if per == 2 {
				out = append(out, byte(b), byte(b>>8))
			} else {
				out = append(out, byte(b))
			}
		}
		last = out[n:]
	}
	if len(out) == 0 {
		return nil, true, &Error{Line: sl[0].no, Col: 1, Msg: "no hex bytes in the dump"}
	}
	if len(out) > MaxSqueezed {
		return nil, true, &Error{Line: sl[0].no, Col: 1, Msg: fmt.Sprintf("the dump holds %d bytes, more than %d", len(out), MaxSqueezed)}
	}
	return &Dump{Format: FormatDump, Packets: [][]byte{out}, Sources: []string{""}, Start: start}, true, nil
}

func allHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}
