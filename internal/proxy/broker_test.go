package proxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
)

// loopbackListener listens on a free loopback port until the test ends.
func loopbackListener(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln
}

// serveConns is a fake broker on loopback: it runs serve on every
// connection it accepts, each in a goroutine of its own, and closes the
// connection when serve returns. It returns the broker's address.
func serveConns(tb testing.TB, serve func(c net.Conn)) string {
	tb.Helper()
	ln := loopbackListener(tb)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// readFrame reads one size-prefixed frame from c and returns what follows
// the size. An end of stream before the size is io.EOF; within the frame,
// io.ErrUnexpectedEOF.
func readFrame(c net.Conn) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// answerBroker is a fake broker on loopback: on any number of connections
// it reads frames and writes, for each, the frame answer returns for the
// request's API key and correlation id. A frame too short for a header
// closes its connection.
func answerBroker(t *testing.T, answer func(key int16, corr int32) []byte) string {
	t.Helper()
	return serveConns(t, func(c net.Conn) {
		for {
			body, err := readFrame(c)
			if err != nil || len(body) < 8 {
				return
			}
			resp := answer(int16(binary.BigEndian.Uint16(body)), int32(binary.BigEndian.Uint32(body[4:8])))
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	})
}
