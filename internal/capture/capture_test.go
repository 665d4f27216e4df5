package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

var (
	regOnce sync.Once
	reg     *schema.Registry
	regErr  error
)

// verify confirms resync boundaries by decoding with the core codec.
func verify(t testing.TB) func([]byte, Dir, *Request) bool {
	known(t)
	c := codec.New(reg)
	return func(b []byte, d Dir, req *Request) bool {
		if d == ClientToServer {
			_, err := c.DecodeRequest(b, codec.Options{})
			return err == nil
		}
		if req == nil {
			return false
		}
		api, ok := reg.API(req.APIKey)
		if !ok {
			return false
		}
		_, err := c.DecodeResponse(b, api, req.Version, codec.Options{})
		return err == nil
	}
}

func known(t testing.TB) func(key, version int16) bool {
	t.Helper()
	dir := testshared.Spec(t, "4.3")
	regOnce.Do(func() { reg, regErr = schema.Load(dir) })
	if regErr != nil {
		t.Fatalf("loading specs: %v", regErr)
	}
	return func(key, v int16) bool {
		api, ok := reg.API(key)
		return ok && api.Request.Valid.Contains(v)
	}
}

// reqFrame encodes a request with kmsg, an independent encoder.
func reqFrame(r kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("capture-test")).AppendRequest(nil, r, corr)
}

// respFrame encodes a response with kmsg and the response header.
func respFrame(r kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 64), uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0) // empty header tagged fields
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

type exchange struct {
	req, resp []byte
}

// sampleExchanges returns a few request/response pairs of different APIs,
// with big frames that span several segments.
func sampleExchanges() []exchange {
	var out []exchange
	corr := int32(1)
	add := func(req kmsg.Request, resp kmsg.Response) {
		out = append(out, exchange{reqFrame(req, corr), respFrame(resp, corr)})
		corr++
	}
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.Version = 3
	for k := int16(0); k < 20; k++ {
		avr.ApiKeys = append(avr.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MaxVersion: 9})
	}
	add(av, avr)

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	topic := "orders"
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version = 12
	mdr.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "broker-1", Port: 9092}}
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = &topic
	for p := int32(0); p < 300; p++ { // several KiB: many segments
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Replicas, mp.ISR = p, []int32{1}, []int32{1}
		mt.Partitions = append(mt.Partitions, mp)
	}
	mdr.Topics = append(mdr.Topics, mt)
	add(md, mdr)

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID = "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version = 4
	hbr.ErrorCode = 27
	add(hb, hbr)
	return out
}

var (
	client = netip.MustParseAddrPort("10.0.0.1:51000")
	server = netip.MustParseAddrPort("10.0.0.2:9092")
	t0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// writeCapture writes the exchanges on one connection, the response to
// request i 1+i ms after it. skip bytes of each direction are left out
// after the handshake when open is false (a mid-connection capture).
func writeCapture(t *testing.T, f Format, xs []exchange, open bool, skipC2S, skipS2C int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(client, server)
	if open {
		if err := c.Open(t0); err != nil {
			t.Fatal(err)
		}
	}
	c.Skip(ClientToServer, skipC2S)
	c.Skip(ServerToClient, skipS2C)
	// cut returns the part of frame b (starting at stream offset *pos)
	// that lies after the first skip bytes of the stream.
	cut := func(b []byte, pos *int, skip int) []byte {
		from := min(max(skip-*pos, 0), len(b))
		*pos += len(b)
		return b[from:]
	}
	var cpos, spos int
	at := t0
	for _, x := range xs {
		if err := c.Write(ClientToServer, at, cut(x.req, &cpos, skipC2S)); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Millisecond)
		if err := c.Write(ServerToClient, at, cut(x.resp, &spos, skipS2C)); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Millisecond)
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type got struct {
	Cut     *Cut
	Offset  int64
	Dir     Dir
	Data    []byte
	Skipped int64
	Req     *Request
	Client  netip.AddrPort
	Server  netip.AddrPort
}

func readAll(t *testing.T, data []byte, opts Options) ([]got, Stats) {
	t.Helper()
	if opts.Known == nil {
		opts.Known = known(t)
		opts.Verify = verify(t)
	}
	var out []got
	st, err := Read(bytes.NewReader(data), opts, func(ev *Event) error {
		// Every other frame is kept (Event.Keep), the others copied: the
		// halves' buffers are both given away and reused, and a buffer
		// written to after it was given away shows in the frames, which
		// tests compare after the read.
		data := bytes.Clone(ev.Data)
		if len(out)%2 == 1 {
			data = ev.Keep()
		}
		out = append(out, got{ev.Cut, ev.Offset, ev.Dir, data, ev.Skipped, ev.Request, ev.Conn.Client, ev.Conn.Server})
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return out, st
}

func TestReadPairsExchanges(t *testing.T) {
	xs := sampleExchanges()
	for _, f := range []Format{PCAP, PCAPNG} {
		capture := writeCapture(t, f, xs, true, 0, 0)
		frames, st := readAll(t, capture, Options{})
		if len(frames) != 2*len(xs) {
			t.Fatalf("format %d: %d frames, want %d", f, len(frames), 2*len(xs))
		}
		for i, x := range xs {
			rq, rs := frames[2*i], frames[2*i+1]
			if rq.Dir != ClientToServer || !bytes.Equal(rq.Data, x.req) {
				t.Errorf("exchange %d: request frame differs (dir %v)", i, rq.Dir)
			}
			if rs.Dir != ServerToClient || !bytes.Equal(rs.Data, x.resp) {
				t.Errorf("exchange %d: response frame differs (dir %v)", i, rs.Dir)
			}
			if rq.Client != client || rq.Server != server {
				t.Errorf("exchange %d: conn %v -> %v", i, rq.Client, rq.Server)
			}
			key, ver := int16(binary.BigEndian.Uint16(x.req[4:])), int16(binary.BigEndian.Uint16(x.req[6:]))
			want := &Request{APIKey: key, Version: ver, CorrelationID: int32(i + 1), Time: t0.Add(time.Duration(2*i) * time.Millisecond), Size: len(x.req)}
			if diff := cmp.Diff(want, rs.Req); diff != "" {
				t.Errorf("exchange %d: paired request (-want +got):\n%s", i, diff)
			}
		}
		if st.Connections != 1 || st.Requests != 3 || st.Responses != 3 || st.Unpaired != 0 || st.SkippedBytes != 0 {
			t.Errorf("stats %+v", st)
		}
	}
}

func TestReadMidConnection(t *testing.T) {
	xs := sampleExchanges()
	// No handshake; the capture starts 5 bytes into the first request and
	// 7 bytes into the first response: both halves must resync on the
	// second exchange.
	capture := writeCapture(t, PCAP, xs, false, 5, 7)
	frames, st := readAll(t, capture, Options{})
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4", len(frames))
	}
	for i, x := range xs[1:] {
		rq, rs := frames[2*i], frames[2*i+1]
		if !bytes.Equal(rq.Data, x.req) || !bytes.Equal(rs.Data, x.resp) {
			t.Errorf("exchange %d differs", i+1)
		}
		if rs.Req == nil || rs.Req.CorrelationID != int32(i+2) {
			t.Errorf("exchange %d: paired with %+v", i+1, rs.Req)
		}
		if rq.Client != client || rq.Server != server {
			t.Errorf("client/server guessed wrong: %v -> %v", rq.Client, rq.Server)
		}
	}
	wantSkipped := int64(len(xs[0].req) - 5 + len(xs[0].resp) - 7)
	if st.SkippedBytes != wantSkipped {
		t.Errorf("skipped %d bytes, want %d", st.SkippedBytes, wantSkipped)
	}
	if frames[0].Skipped != int64(len(xs[0].req)-5) || frames[1].Skipped != int64(len(xs[0].resp)-7) {
		t.Errorf("per-frame skipped: %d, %d", frames[0].Skipped, frames[1].Skipped)
	}
}

func TestReadPortsAndNonKafka(t *testing.T) {
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAP)
	k := w.Conn(client, server)
	h := w.Conn(netip.MustParseAddrPort("10.0.0.1:52000"), netip.MustParseAddrPort("10.0.0.3:80"))
	for _, c := range []*ConnWriter{k, h} {
		if err := c.Open(t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Write(ClientToServer, t0, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ServerToClient, t0, []byte("HTTP/1.1 200 OK\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		_ = k.Write(ClientToServer, t0, x.req)
		_ = k.Write(ServerToClient, t0, x.resp)
	}
	frames, st := readAll(t, buf.Bytes(), Options{})
	if len(frames) != 6 || st.Connections != 1 {
		t.Errorf("no ports: %d frames on %d connections, want 6 on 1", len(frames), st.Connections)
	}
	frames, st = readAll(t, buf.Bytes(), Options{Ports: []int{9093}})
	if len(frames) != 0 || st.OtherPorts != st.Packets || st.OtherPorts == 0 {
		t.Errorf("port 9093: %d frames, want 0; %d of %d packets counted on other ports", len(frames), st.OtherPorts, st.Packets)
	}
	frames, _ = readAll(t, buf.Bytes(), Options{Ports: []int{9092}})
	if len(frames) != 6 {
		t.Errorf("port 9092: %d frames, want 6", len(frames))
	}
}

func TestReadBadInput(t *testing.T) {
	for name, in := range map[string][]byte{
		"empty":    nil,
		"short":    {0xd4, 0xc3},
		"not pcap": []byte("hello, world, this is text"),
	} {
		_, err := Read(bytes.NewReader(in), Options{Known: known(t)}, func(*Event) error { return nil })
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A capture cut in the middle of a packet: the frames before the cut
	// come out, then an error.
	capture := writeCapture(t, PCAP, sampleExchanges(), true, 0, 0)
	cut := capture[:len(capture)-30]
	n := 0
	_, err := Read(bytes.NewReader(cut), Options{Known: known(t)}, func(*Event) error { n++; return nil })
	if err == nil || n == 0 {
		t.Errorf("truncated capture: err %v after %d frames", err, n)
	}
}

// TestReadPcapngPacketPastBlock: a pcapng packet block whose captured
// length runs past the block makes the reader take the blocks after it
// for packet data, up to the end of the file. That is no file cut short
// (whose error wraps io.ErrUnexpectedEOF, a warning for the commands):
// the error names the malformed block's offset.
func TestReadPcapngPacketPastBlock(t *testing.T) {
	ng := writeCapture(t, PCAPNG, sampleExchanges(), true, 0, 0)
	le := binary.LittleEndian
	at, packets := -1, 0
	for off := 0; off+12 <= len(ng); off += int(le.Uint32(ng[off+4:])) {
		if le.Uint32(ng[off:]) == 6 {
			if packets++; packets == 4 {
				at = off
				break
			}
		}
	}
	if at < 0 {
		t.Fatal("no fourth enhanced packet block")
	}
	bad := slices.Clone(ng)
	le.PutUint32(bad[at+20:], le.Uint32(bad[at+4:])) // captured length: the whole block
	_, err := Read(bytes.NewReader(bad), Options{Known: known(t)}, func(*Event) error { return nil })
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v, want an error that is not a cut", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("offset %d", at)) {
		t.Errorf("err %q does not name the block's offset %d", err, at)
	}
	// Cut inside a packet, the same file is a cut.
	_, err = Read(bytes.NewReader(ng[:len(ng)-30]), Options{Known: known(t)}, func(*Event) error { return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut pcapng: err %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestReadMidConnectionRolesFromContent(t *testing.T) {
	// No SYN and no ports, and the client's port is the lower one, so the
	// port guess is wrong: the half that carries requests is the client's.
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAP)
	cl, sv := netip.MustParseAddrPort("10.0.0.1:1025"), netip.MustParseAddrPort("10.0.0.2:40000")
	c := w.Conn(cl, sv)
	for _, x := range xs {
		if err := c.Write(ClientToServer, t0, x.req); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ServerToClient, t0, x.resp); err != nil {
			t.Fatal(err)
		}
	}
	frames, _ := readAll(t, buf.Bytes(), Options{})
	if len(frames) != 6 {
		t.Fatalf("%d frames, want 6", len(frames))
	}
	for i, f := range frames {
		if f.Client != cl || f.Server != sv {
			t.Errorf("frame %d: client %v server %v, want %v and %v", i, f.Client, f.Server, cl, sv)
		}
		want := xs[i/2].req
		if i%2 == 1 {
			want = xs[i/2].resp
			if f.Req == nil {
				t.Errorf("response %d unpaired", i/2)
			}
		}
		if !bytes.Equal(f.Data, want) {
			t.Errorf("frame %d differs", i)
		}
	}
}

func TestReadIPv6(t *testing.T) {
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAPNG)
	cl, sv := netip.MustParseAddrPort("[2001:db8::1]:50000"), netip.MustParseAddrPort("[2001:db8::2]:9092")
	c := w.Conn(cl, sv)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		c.Write(ClientToServer, t0, x.req)
		c.Write(ServerToClient, t0, x.resp)
	}
	c.Close(t0)
	w.Flush()
	frames, _ := readAll(t, buf.Bytes(), Options{Ports: []int{9092}})
	if len(frames) != 6 {
		t.Fatalf("%d frames, want 6", len(frames))
	}
	if frames[0].Client != cl || frames[0].Server != sv || frames[5].Req == nil || !bytes.Equal(frames[5].Data, xs[2].resp) {
		t.Errorf("IPv6: %v -> %v, last pairing %+v", frames[0].Client, frames[0].Server, frames[5].Req)
	}
}

// TestReadBogusTimestamp: one packet whose timestamp lies far in the
// future (a damaged record, a host with a wrong clock in a merged
// capture) does not make every live connection look idle: the
// connection after it is still the one it was, and the requests in
// flight when idle connections are next looked for still pair their
// responses.
func TestReadBogusTimestamp(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	client, server := netip.MustParseAddrPort("10.0.0.1:51000"), netip.MustParseAddrPort("10.0.0.2:9092")
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := w.Conn(client, server)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	other := w.Conn(netip.MustParseAddrPort("10.9.9.9:40000"), netip.MustParseAddrPort("10.9.9.8:80"))
	if err := other.Write(ClientToServer, t0.AddDate(50, 0, 0), []byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	at, corr := t0, int32(0)
	for w.Packets() < 2*flushEvery {
		for i := int32(0); i < 50; i++ {
			if err := c.Write(ClientToServer, at, reqFrame(kmsg.NewPtrHeartbeatRequest(), corr+i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := int32(0); i < 50; i++ {
			if err := c.Write(ServerToClient, at, respFrame(kmsg.NewPtrHeartbeatResponse(), corr+i)); err != nil {
				t.Fatal(err)
			}
		}
		at, corr = at.Add(time.Millisecond), corr+50
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	frames, st := readAll(t, buf.Bytes(), Options{})
	unpaired := 0
	for _, f := range frames {
		if f.Dir == ServerToClient && f.Req == nil {
			unpaired++
		}
	}
	if len(frames) != 2*int(corr) || unpaired != 0 || st.Connections != 1 {
		t.Errorf("%d frames of %d, %d responses without their request, %d connections (want 1)", len(frames), 2*corr, unpaired, st.Connections)
	}
}
