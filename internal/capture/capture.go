// Package capture reads Kafka traffic out of packet captures: pcap and
// pcapng files are read in pure Go (pcap by its own reader, pcapng by
// gopacket's pcapgo behind a guard that takes out the blocks pcapgo would
// hold out of proportion: ngguard.go), TCP streams are
// reassembled (tcp.go: segments in sequence order, retransmitted and
// overlapping bytes delivered once), each direction is split into Kafka
// frames, and responses are paired with their requests by correlation id
// per connection, so each response can be decoded with the API and version
// of the request it answers.
//
// # Streaming
//
// [Read] calls a function for every frame as soon as it is complete and
// keeps no frame after that call returns; a consumer that keeps frames
// takes them with [Event.Keep], which hands over a frame assembled from
// several packets without copying it. Memory is bounded by the largest
// frame, the reassembler's out-of-order buffer ([Options.MaxBuffered]) and
// the pending-request table ([Options.MaxPending] per connection,
// [Options.MaxPendingTotal] in all), never by the file size.
// The input may be a pipe: nothing waits for the end of the file.
//
// # Gaps
//
// Bytes the capture lost are declared a gap as soon as the other side
// acknowledges them (or the out-of-order buffer is full, or the connection
// ends). A frame a gap cuts is handed out with [Event.Cut] (its captured
// start, the gap's offset and size); when its size prefix was captured the
// next frame starts right where it ends, otherwise the next frame boundary
// is searched for. A request cut after its header still pairs its
// response.
//
// # Captures that begin mid-connection
//
// A connection whose SYN was not captured starts in the middle of a byte
// stream. Each half is first tried at its first byte: the client's as a
// request, the server's as the answer to a request the capture missed
// (confirmed by [Options.Verify]). Failing that, the client-to-server half
// is resynchronised on the first offset that reads as a plausible request
// frame (size in range, API key known, a valid version, a client id of
// valid UTF-8 text that fits); the server-to-client half on the first
// offset that reads as a response to a request seen on the connection.
// Bytes skipped are counted in [Event.Skipped] and [Stats].
//
// # Connections that are not Kafka
//
// Without [Options.Ports], a connection whose first client frame does not
// look like a Kafka request is ignored; one that looks like Kafka but fails
// the stricter checks is decoded and flagged ([Conn.Note]). Every
// connection that carried no frame is counted in [Stats.Ignored] with the
// reason.
//
// # Which side is the client
//
// The sender of the first SYN; else the endpoint on one of [Options.Ports];
// else the endpoint with the lower port number.
package capture

import (
	"bytes"
	"fmt"
	"net/netip"
	"time"

	"github.com/manifester/manifester/internal/pairing"
)

// Dir is the direction of a frame on its connection.
type Dir uint8

// Directions.
const (
	ClientToServer Dir = iota // requests
	ServerToClient            // responses
)

func (d Dir) String() string {
	if d == ServerToClient {
		return "server->client"
	}
	return "client->server"
}

// Conn is one TCP connection of the capture.
type Conn struct {
	// ID numbers connections from 1 in the order they first appear.
	ID     int
	Client netip.AddrPort
	Server netip.AddrPort
	// SawSYN reports whether the capture holds the connection's start.
	SawSYN bool
	// Note, when set, says why the connection is suspect: its first
	// request looked like Kafka but failed the framing checks; its frames
	// are decoded all the same.
	Note string
	// TLS, for a connection read through TLS, names its version and
	// cipher suite ("TLS 1.3 TLS_AES_128_GCM_SHA256"); its frames' offsets
	// are offsets in the decrypted stream.
	TLS string
}

func (c *Conn) String() string {
	return fmt.Sprintf("%s -> %s", c.Client, c.Server)
}

// Request identifies the request a response answers: its API key,
// version and correlation id, when its frame completed (Time) and its
// size. It is package pairing's, which pairs the frames.
type Request = pairing.Request

// Event is one complete Kafka frame.
type Event struct {
	Conn *Conn
	Dir  Dir
	// Time is the capture time of the packet that completed the frame.
	Time time.Time
	// Data is the frame, size prefix included. It is only valid during the
	// call; [Event.Keep] gives it for longer.
	Data []byte
	// Offset is the position of the frame in its direction's byte stream
	// (0 = the first byte after the SYN, or the first byte captured).
	Offset int64
	// Skipped is the number of bytes of this direction that were skipped
	// (not captured, or not a plausible frame) just before this frame.
	Skipped int64
	// Lost is the part of Skipped that was never captured (gaps).
	Lost int64
	// Cut, when set, says that a gap in the capture (or its end) cut this
	// frame short: Data holds only the bytes captured before the gap.
	Cut *Cut
	// Request is the paired request, for a response; nil when no request
	// with the response's correlation id was seen on the connection. A
	// request cut by a gap is paired too when its header was captured.
	Request *Request
	// from is the half whose buffer holds Data, when Data lies there
	// (not in a packet or a decrypted record, which their readers
	// reuse); nil otherwise.
	from *half
}

// Keep returns Data for the caller to keep after the call, without a copy
// when Data lies in the buffer the reader assembled the frame in: the
// reader then leaves that buffer to the caller and starts another for the
// next frame. Otherwise it returns a copy: a frame that lay within one
// packet or one decrypted TLS record (their readers reuse that memory),
// or a cut frame. Each call returns bytes of the caller's own (a second
// call, a copy). Call it during the call only: after it returns, the
// reader reuses what it did not hand over.
func (ev *Event) Keep() []byte {
	if ev.from == nil {
		return bytes.Clone(ev.Data)
	}
	ev.from.kept, ev.from = true, nil
	return ev.Data[:len(ev.Data):len(ev.Data)]
}

// Stats summarises a read.
type Stats struct {
	Packets     int64 // packets read from the file
	TCPPackets  int64 // packets with a TCP layer on a selected port
	Bytes       int64 // bytes of the capture file read
	Connections int   // connections that carried Kafka frames
	Requests    int64 // whole request frames
	Responses   int64 // whole response frames
	Unpaired    int64 // responses with no request seen
	Unanswered  int64 // requests with no response seen (acks=0 produce, or cut off)
	// SkippedBytes counts captured stream bytes that are part of no whole
	// frame: resynchronisation, frames cut by gaps, non-Kafka connections.
	SkippedBytes int64
	Undecodable  int64 // packets whose link/IP/TCP layers did not decode
	// OtherLinks counts the packets of link types the reader does not
	// read, by link type ("link type 147").
	OtherLinks map[string]int64
	// Oversized counts the pcap records longer than [MaxPacket],
	// skipped unread (they are counted in Packets too).
	Oversized  int64
	Fragments  int64 // IPv4 and IPv6 fragments (not reassembled)
	NotTCP     int64 // packets that carry no TCP (UDP, ARP, ...)
	OtherPorts int64 // TCP packets not on one of Options.Ports
	// ControlOnly counts bare ACK, FIN and RST packets of connections
	// that were seen no further (no bytes, nothing to decode).
	ControlOnly int64
	// Evicted counts the connections finished before their end because
	// more than [Options.MaxConns] were open at once (the quietest went).
	Evicted int64
	// Gaps and GapBytes count the holes in the byte streams (segments the
	// capture lost) and their bytes; CutFrames the frames they, or the end
	// of the capture, cut short.
	Gaps      int64
	GapBytes  int64
	CutFrames int64
	// RetransmittedBytes counts payload bytes seen twice (retransmitted or
	// overlapping segments), delivered once.
	RetransmittedBytes int64
	// LateBytes counts payload bytes that arrived after the hole they
	// fill had been declared a gap (the capture put them after the
	// acknowledgement of them: captures of several interfaces, or
	// "any", can reorder packets); the frames they belong to stay cut.
	LateBytes int64
	// Ignored counts the connections that carried no Kafka frame, by
	// reason: "no payload", "TLS" (the read had no TLS secrets), "TLS: "
	// and why it was not decrypted (a Reason of package tlsdecrypt),
	// "HTTP", "not Kafka", "no Kafka frame".
	Ignored map[string]int64
	// Suspect counts connections decoded although their first request
	// failed the framing checks (see [Conn.Note]).
	Suspect int64
	// Tunnels counts the TCPPackets read from inside a tunnel, by its
	// kind (the outermost): TunnelVXLAN, TunnelGeneve, TunnelGRE,
	// TunnelIPinIP.
	Tunnels map[string]int64
	// TLS counts the TLS connections read (see [Options.TLSKeys]).
	TLS TLSStats
}
