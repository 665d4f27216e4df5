package proxy

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// answerBroker is a fake broker on loopback: on any number of connections
// it reads frames and writes, for each, the frame answer returns for the
// request's API key and correlation id. A frame too short for a header
// closes its connection.
func answerBroker(t *testing.T, answer func(key int16, corr int32) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					var size [4]byte
					if _, err := io.ReadFull(c, size[:]); err != nil {
						return
					}
					body := make([]byte, binary.BigEndian.Uint32(size[:]))
					if _, err := io.ReadFull(c, body); err != nil || len(body) < 8 {
						return
					}
					resp := answer(int16(binary.BigEndian.Uint16(body)), int32(binary.BigEndian.Uint32(body[4:8])))
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
