package capture

import "bytes"

// pcapngMagic is the block type of a pcapng file's first block.
var pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}

// IsCapture reports whether head, the first bytes of a file, start like a
// capture Read reads: pcap (either byte order, microsecond or nanosecond
// timestamps) or pcapng. Four bytes are enough.
func IsCapture(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	return bytes.Equal(head[:4], pcapngMagic) || isPcapMagic(head[:4])
}
