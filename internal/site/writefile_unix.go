//go:build unix

package site

import (
	"io"
	"io/fs"

	"golang.org/x/sys/unix"
)

// writeFile is os.WriteFile(name, body, 0o644) in three system calls:
// open, write (as often as it takes) and close, without the poller
// registration and the descriptor-flag calls an *os.File makes.
func writeFile(name string, body []byte) error {
	var fd int
	var err error
	for {
		fd, err = unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for len(body) > 0 {
		n, err := unix.Write(fd, body)
		if err == unix.EINTR {
			continue
		}
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			unix.Close(fd)
			return &fs.PathError{Op: "write", Path: name, Err: err}
		}
		body = body[n:]
	}
	if err := unix.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: name, Err: err}
	}
	return nil
}
