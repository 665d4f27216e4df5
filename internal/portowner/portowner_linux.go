//go:build linux

package portowner

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listener finds the inode of the listening socket in /proc/net/tcp and
// tcp6, then the process holding a descriptor of it in /proc/*/fd.
func listener(port int) (Process, bool) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(table, port, inodes)
	}
	if len(inodes) == 0 {
		return Process{}, false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return Process{}, false
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // another user's process
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				return Process{PID: pid, Name: strings.TrimSpace(string(comm))}, true
			}
		}
	}
	return Process{}, false
}

// listeningInodes adds the inodes of the sockets of a /proc/net/tcp table
// that listen (state 0A) on port.
func listeningInodes(table string, port int, inodes map[string]bool) {
	f, err := os.Open(table)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the heading
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
			inodes[fields[9]] = true
		}
	}
}
