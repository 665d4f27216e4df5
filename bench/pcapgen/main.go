// Command pcapgen writes a pcap of Kafka traffic for the capture benchmark:
// the exchanges of the benchmark corpus (bench/corpus), replayed round-robin
// over several TCP connections to port 9092 until the file reaches the
// requested size. Every connection starts with a three-way handshake;
// payloads are cut into segments of at most -mss bytes, as on a real wire.
//
// Only exchanges whose request and response both decode cleanly with the
// 4.3 spec are used, so that every frame of the capture is valid.
//
//	go run ./bench/pcapgen -out kafka.pcap -mb 200
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/schema"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	out := flag.String("out", "kafka.pcap", "pcap file to write")
	mb := flag.Int("mb", 200, "stop after this many MiB of pcap")
	specDir := flag.String("spec", "../shared/kafka-spec/4.3", "spec directory used to check the frames")
	conns := flag.Int("conns", 8, "number of TCP connections")
	mss := flag.Int("mss", 1460, "largest TCP payload per packet")
	comp := flag.String("compress", "none", "compression of every record batch: none, gzip, snappy, lz4 or zstd (values are then log-like text)")
	big := flag.Int("big", 0, "make every Nth exchange a Produce of 16 batches of 1,000 log-like records of 1 KiB, compressed with -compress (zstd with none): the frames whose lines are 80 times their size (0: none)")
	flag.Parse()
	cd := slices.Index(codecNames, *comp)
	if cd < 0 {
		log.Fatalf("-compress %q: want one of %v", *comp, codecNames)
	}
	if err := run(*out, int64(*mb)<<20, *specDir, *conns, *mss, cd, *big); err != nil {
		log.Fatal(err)
	}
}

// bigExchange is a Produce v7 request of 16 batches of 1,000 records
// each, values of 1 KiB of log-like text compressed with codec (as a
// producer of application logs sends them), and its response.
func bigExchange(codec int) corpus.Exchange {
	var batches [][]byte
	for b := range 16 {
		batches = append(batches, corpus.CompressedRecordBatch(uint64(b), 1000, 1000, codec, hostile.Compress))
	}
	req := hostile.Produce(batches...)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	return corpus.Exchange{
		Request:  corpus.Frame{Request: true, Key: 0, Version: 7, CorrelationID: 1, Bytes: req},
		Response: corpus.ResponseFrame(resp, 1),
	}
}

// codecNames are the -compress values, by RecordBatch attribute.
var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

type conn struct {
	client, server net.IP
	cport          uint16
	cseq, sseq     uint32
	handshakeDone  bool
	nextCorr       int32
}

type writer struct {
	w    *pcapgo.Writer
	ts   time.Time
	buf  gopacket.SerializeBuffer
	mss  int
	size int64
}

func (w *writer) packet(c *conn, fromClient bool, flags string, payload []byte) error {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: c.client, DstIP: c.server}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(c.cport), DstPort: 9092, Seq: c.cseq, Ack: c.sseq, Window: 65535}
	if !fromClient {
		eth.SrcMAC, eth.DstMAC = eth.DstMAC, eth.SrcMAC
		ip.SrcIP, ip.DstIP = c.server, c.client
		tcp.SrcPort, tcp.DstPort = 9092, layers.TCPPort(c.cport)
		tcp.Seq, tcp.Ack = c.sseq, c.cseq
	}
	for _, f := range flags {
		switch f {
		case 'S':
			tcp.SYN = true
		case 'A':
			tcp.ACK = true
		case 'P':
			tcp.PSH = true
		}
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		return err
	}
	if err := gopacket.SerializeLayers(w.buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return err
	}
	b := w.buf.Bytes()
	w.ts = w.ts.Add(7 * time.Microsecond)
	w.size += int64(len(b)) + 16
	return w.w.WritePacket(gopacket.CaptureInfo{Timestamp: w.ts, CaptureLength: len(b), Length: len(b)}, b)
}

func (w *writer) stream(c *conn, fromClient bool, data []byte) error {
	for len(data) > 0 {
		n := min(len(data), w.mss)
		if err := w.packet(c, fromClient, "PA", data[:n]); err != nil {
			return err
		}
		if fromClient {
			c.cseq += uint32(n)
		} else {
			c.sseq += uint32(n)
		}
		data = data[n:]
	}
	return nil
}

func run(out string, limit int64, specDir string, nconns, mss, compression, big int) error {
	reg, err := schema.Load(specDir)
	if err != nil {
		return err
	}
	c := codec.New(reg)
	known := func(key int16) (int16, int16, bool) {
		api, ok := reg.API(key)
		if !ok || api.Reserved() {
			return 0, 0, false
		}
		return api.Request.Valid.Lo, api.Request.Valid.Hi, true
	}
	all := corpus.Exchanges(known)
	if compression != 0 {
		all = corpus.CompressedExchanges(known, compression, hostile.Compress)
	}
	if big > 0 {
		// Every big'th exchange: the big Produce, checked as the others.
		cd := compression
		if cd == 0 {
			cd = slices.Index(codecNames, "zstd")
		}
		var with []corpus.Exchange
		for i, x := range all {
			if i%big == 0 {
				with = append(with, bigExchange(cd))
			}
			with = append(with, x)
		}
		all = with
	}
	var xs []corpus.Exchange
	for _, x := range all {
		api, _ := reg.API(x.Request.Key)
		if _, err := c.DecodeRequest(x.Request.Bytes, codec.Options{}); err != nil {
			continue
		}
		if _, err := c.DecodeResponse(x.Response.Bytes, api, x.Response.Version, codec.Options{}); err != nil {
			continue
		}
		xs = append(xs, x)
	}
	fmt.Fprintf(os.Stderr, "pcapgen: %d of %d exchanges decode cleanly\n", len(xs), len(all))
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	pw := pcapgo.NewWriter(bw)
	if err := pw.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		return err
	}
	w := &writer{w: pw, ts: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), buf: gopacket.NewSerializeBuffer(), mss: mss, size: 24}
	conns := make([]*conn, nconns)
	for i := range conns {
		conns[i] = &conn{client: net.IPv4(10, 0, 0, byte(10+i)).To4(), server: net.IPv4(10, 0, 0, 1).To4(), cport: uint16(40000 + i), cseq: uint32(1000 * (i + 1)), sseq: uint32(5000 * (i + 1)), nextCorr: 1}
	}
	var frames, bytes int64
	for i := 0; w.size < limit; i++ {
		x := xs[i%len(xs)]
		cn := conns[i%nconns]
		if !cn.handshakeDone {
			if err := w.packet(cn, true, "S", nil); err != nil {
				return err
			}
			cn.cseq++
			if err := w.packet(cn, false, "SA", nil); err != nil {
				return err
			}
			cn.sseq++
			if err := w.packet(cn, true, "A", nil); err != nil {
				return err
			}
			cn.handshakeDone = true
		}
		corr := cn.nextCorr
		cn.nextCorr++
		req := withCorr(x.Request.Bytes, 8, corr)
		resp := withCorr(x.Response.Bytes, 4, corr)
		if err := w.stream(cn, true, req); err != nil {
			return err
		}
		if err := w.stream(cn, false, resp); err != nil {
			return err
		}
		frames += 2
		bytes += int64(len(req) + len(resp))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pcapgen: wrote %s: %d bytes, %d frames, %d bytes of Kafka frames\n", out, w.size, frames, bytes)
	return nil
}

func withCorr(b []byte, at int, corr int32) []byte {
	out := append([]byte(nil), b...)
	out[at], out[at+1], out[at+2], out[at+3] = byte(corr>>24), byte(corr>>16), byte(corr>>8), byte(corr)
	return out
}
