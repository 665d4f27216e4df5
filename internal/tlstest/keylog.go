package tlstest

import (
	"bufio"
	"bytes"
	"strings"
	"sync"
)

// syncBuffer is a bytes.Buffer for concurrent writers (key logs of
// connections handshaking at once).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// keyLogLines returns the lines of a key log that are not comments.
func keyLogLines(b []byte) []string {
	var ls []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			ls = append(ls, l)
		}
	}
	return ls
}
