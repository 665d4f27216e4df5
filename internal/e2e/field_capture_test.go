package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
)

// chunk is bytes one side of a relayed connection sent, in the order the
// relay read them.
type chunk struct {
	conn int
	dir  capture.Dir
	at   time.Time
	data []byte
}

// wireTap relays connections to one upstream address and records every
// chunk both ways, in one order (a request's bytes are recorded before
// they are forwarded, so before their response).
type wireTap struct {
	ln     net.Listener
	mu     sync.Mutex
	chunks []chunk
	addrs  [][2]netip.AddrPort // client, listener per connection
	wg     sync.WaitGroup
}

func newWireTap(t *testing.T, upstream string) *wireTap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireTap{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			w.mu.Lock()
			id := len(w.addrs)
			w.addrs = append(w.addrs, [2]netip.AddrPort{
				netip.MustParseAddrPort(c.RemoteAddr().String()), netip.MustParseAddrPort(c.LocalAddr().String())})
			w.mu.Unlock()
			w.wg.Add(2)
			relay := func(dst, src net.Conn, dir capture.Dir) {
				defer w.wg.Done()
				io.Copy(dst, io.TeeReader(src, &tapWriter{w: w, conn: id, dir: dir}))
				dst.Close()
			}
			go relay(u, c, capture.ClientToServer)
			go relay(c, u, capture.ServerToClient)
		}
	}()
	return w
}

type tapWriter struct {
	w    *wireTap
	conn int
	dir  capture.Dir
}

func (t *tapWriter) Write(p []byte) (int, error) {
	t.w.mu.Lock()
	t.w.chunks = append(t.w.chunks, chunk{t.conn, t.dir, time.Now(), bytes.Clone(p)})
	t.w.mu.Unlock()
	return len(p), nil
}

// writePcap writes the recorded connections, each from its handshake to
// its FINs, as a capture file; it returns the number of Kafka frames in
// each direction's bytes (split by their size prefixes alone). A stream
// that ends inside a frame (a response the broker was writing as the
// client closed) is written up to its last whole frame.
func (w *wireTap) writePcap(t *testing.T, path string) (frames, conns int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	type key [2]int
	whole := map[key]int{} // bytes of whole frames per stream
	{
		streams := map[key]*bytes.Buffer{}
		for _, c := range w.chunks {
			k := key{c.conn, int(c.dir)}
			if streams[k] == nil {
				streams[k] = &bytes.Buffer{}
			}
			streams[k].Write(c.data)
		}
		for k, s := range streams {
			b := s.Bytes()
			for len(b) >= 4 {
				n := int(binary.BigEndian.Uint32(b)) + 4
				if n > len(b) {
					t.Logf("connection %d %v: %d bytes after the last whole frame left out", k[0], capture.Dir(k[1]), len(b))
					break
				}
				frames++
				whole[k] += n
				b = b[n:]
			}
		}
	}
	var buf bytes.Buffer
	cw, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	writers := map[int]*capture.ConnWriter{}
	written := map[key]int{}
	var last time.Time
	for _, c := range w.chunks {
		k := key{c.conn, int(c.dir)}
		data := c.data[:min(len(c.data), max(whole[k]-written[k], 0))]
		written[k] += len(data)
		cc, ok := writers[c.conn]
		if !ok {
			cc = cw.Conn(w.addrs[c.conn][0], w.addrs[c.conn][1])
			if err := cc.Open(c.at); err != nil {
				t.Fatal(err)
			}
			writers[c.conn] = cc
		}
		if err := cc.Write(c.dir, c.at, data); err != nil {
			t.Fatal(err)
		}
		last = c.at
	}
	for i := range len(w.addrs) {
		if cc := writers[i]; cc != nil {
			if err := cc.Close(last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return frames, len(writers)
}

// TestCaptureKgoNewestThroughKfake: franz-go's kgo at its own newest
// versions (it opens every connection with an ApiVersions v5 probe,
// newer than Kafka 4.3) against kfake capped at Kafka 4.3's versions,
// captured on the wire and decoded with the 4.3 spec: every frame
// decodes (the probes as warnings, the broker's v0 answers as v0), every
// connection is there, and nothing is skipped, cut or unpaired. (A
// request the client leaves unanswered as it closes, a fetch waiting for
// data, is not a loss.)
func TestCaptureKgoNewestThroughKfake(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(specVersions(t)), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	tap := newWireTap(t, cluster.ListenAddrs()[0])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// kfake advertises its own address; the dialer keeps kgo on the tap.
	dialer := kgo.Dialer(func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, tap.ln.Addr().String())
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(tap.ln.Addr().String()), dialer, kgo.ClientID("Zürich-日本-consumer"),
		kgo.DefaultProduceTopic("orders"), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g"), kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "audit", 2, 1
	ct.Topics = append(ct.Topics, rt)
	if _, err := ct.RequestWith(ctx, cl); err != nil {
		t.Fatalf("create topics: %v", err)
	}
	for i := 0; i < 10; i++ {
		r := &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte(strings.Repeat("order ", 10))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for got := 0; got < 10; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	tap.ln.Close()
	tap.wg.Wait()

	path := filepath.Join(t.TempDir(), "kgo.pcap")
	frames, conns := tap.writePcap(t, path)
	for _, ports := range [][]string{nil, {"--port", strconv.Itoa(int(tap.addrs[0][1].Port()))}} {
		out, errOut, code := decodePcap(t, path, append([]string{"--format", "json", "--roundtrip"}, ports...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", ports, code, errOut)
		}
		summary := strconv.Itoa(conns) + " connections"
		for _, bad := range []string{"without their request", "gaps", "cut", "skipped", "ignored", "did not decode", "suspect", "failed the framing"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%v: the summary says %q: %s", ports, bad, errOut)
			}
		}
		if !strings.Contains(errOut, summary) {
			t.Errorf("%v: want %s: %s", ports, summary, errOut)
		}
		var n, probes, answers int
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			n++
			var l struct {
				Kind      string  `json:"kind"`
				APIKey    *int16  `json:"api_key"`
				Version   int16   `json:"version"`
				ClientID  *string `json:"client_id"`
				Error     string  `json:"error"`
				Warning   string  `json:"warning"`
				Note      string  `json:"note"`
				Roundtrip *bool   `json:"roundtrip"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			switch {
			case l.Error != "":
				t.Errorf("%v: %.400s", ports, sc.Text())
			case l.Warning != "":
				// Only kgo's ApiVersions probe, newer than the spec.
				if l.Kind != "request" || l.APIKey == nil || *l.APIKey != 18 || l.Version <= 4 || !strings.Contains(l.Warning, "newer than this spec") {
					t.Errorf("%v: unexpected warning: %.400s", ports, sc.Text())
				}
				probes++
			case l.Roundtrip == nil || !*l.Roundtrip:
				t.Errorf("%v: does not round-trip: %.400s", ports, sc.Text())
			case l.Note != "":
				answers++
			}
			if l.Kind == "request" && (l.ClientID == nil || *l.ClientID != "Zürich-日本-consumer") {
				t.Errorf("%v: client id %v", ports, l.ClientID)
			}
		}
		if n != frames {
			t.Errorf("%v: %d frames decoded, the streams hold %d", ports, n, frames)
		}
		// kgo probes on its first connections and then remembers the
		// broker's versions.
		if probes == 0 || answers != probes {
			t.Errorf("%v: %d probes and %d v0 answers on %d connections", ports, probes, answers, conns)
		}
		if ports == nil {
			// Wireshark's Kafka dissector finds the same frames.
			checkTsharkKafka(t, requireTool(t, "tshark"), path, parseLines(t, out))
		}
	}
}
