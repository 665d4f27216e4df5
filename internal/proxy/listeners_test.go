package proxy

import (
	"github.com/manifester/manifester/internal/testframes"
	"slices"

	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataBroker answers Metadata (v12) with the brokers that brokers()
// returns at the time, and any other request with a Heartbeat response,
// on any number of connections.
func metadataBroker(t *testing.T, brokers func() []kmsg.MetadataResponseBroker) string {
	t.Helper()
	return answerBroker(t, func(key int16, corr int32) []byte {
		if key == 3 {
			m := kmsg.NewPtrMetadataResponse()
			m.Version, m.Brokers = 12, brokers()
			return testframes.Response(m, corr)
		}
		_, resp := heartbeat(corr)
		return resp
	})
}

// askMetadata sends a Metadata request on c and reads the brokers (kmsg).
func askMetadata(t *testing.T, c net.Conn, corr int32) []kmsg.MetadataResponseBroker {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	return roundTrip(t, c, req, corr).(*kmsg.MetadataResponse).Brokers
}

func addrOf(b kmsg.MetadataResponseBroker) string {
	return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
}

func broker(node int32, addr string) kmsg.MetadataResponseBroker {
	h, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return kmsg.MetadataResponseBroker{NodeID: node, Host: h, Port: int32(n)}
}

// freePorts finds n free consecutive ports from a base, and returns the
// base.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for base := 31000; base < 60000; base += 97 {
		ok := true
		var lns []net.Listener
		for i := 0; i < n && ok; i++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
			if err != nil {
				ok = false
				break
			}
			lns = append(lns, ln)
		}
		for _, ln := range lns {
			ln.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free ports")
	return 0
}

// reaches reports which of the heartbeat brokers a connection through
// addr reached (its end is reported on that broker's channel).
func reaches(t *testing.T, addr string, ends map[string]chan error) string {
	t.Helper()
	c := dial(t, addr)
	if err := exchange(c, 42); err != nil {
		t.Fatalf("through %s: %v", addr, err)
	}
	c.Close()
	select {
	case <-ends["a"]:
		return "a"
	case <-ends["b"]:
		return "b"
	case <-time.After(20 * time.Second):
		t.Fatal("no broker saw the connection end")
	}
	return ""
}

// TestPinnedListeners: --broker-listen gives node 1 a fixed address,
// --broker-port-base gives node 2 port base+2, the advertised addresses
// follow (with the advertise host), and when node 1 is advertised at
// another address its pinned listener forwards there.
func TestPinnedListeners(t *testing.T) {
	a, endsA := heartbeatBroker(t)
	b, endsB := heartbeatBroker(t)
	ends := map[string]chan error{"a": endsA, "b": endsB}
	var mu sync.Mutex
	current := []kmsg.MetadataResponseBroker{broker(1, a), broker(2, b)}
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker {
		mu.Lock()
		defer mu.Unlock()
		return append([]kmsg.MetadataResponseBroker(nil), current...)
	})
	base := freePorts(t, 4)
	pin1 := "127.0.0.1:" + strconv.Itoa(base+3)
	p, ev := start(t, up, func(c *Config) {
		c.BrokerListen = map[int32]string{1: pin1}
		c.BrokerPortBase = base
	})
	c := dial(t, p.Addr())
	got := askMetadata(t, c, 1)
	if addrOf(got[0]) != pin1 || addrOf(got[1]) != "127.0.0.1:"+strconv.Itoa(base+2) {
		t.Fatalf("advertised %s and %s, want %s and port %d", addrOf(got[0]), addrOf(got[1]), pin1, base+2)
	}
	if r := reaches(t, pin1, ends); r != "a" {
		t.Fatalf("node 1's listener reached broker %s", r)
	}
	if r := reaches(t, addrOf(got[1]), ends); r != "b" {
		t.Fatalf("node 2's listener reached broker %s", r)
	}
	// Node 1 moves to b's address: same listener, new destination.
	mu.Lock()
	current[0] = broker(1, b)
	mu.Unlock()
	got = askMetadata(t, c, 2)
	if addrOf(got[0]) != pin1 {
		t.Fatalf("node 1 advertised at %s after moving, want %s", addrOf(got[0]), pin1)
	}
	if r := reaches(t, pin1, ends); r != "b" {
		t.Fatalf("after the move node 1's listener reached broker %s", r)
	}
	c.Close()
	p.Close()
	var moved bool
	for _, e := range ev.of(EventListen) {
		moved = moved || strings.Contains(e.Detail, "broker node 1 is now advertised at "+b)
	}
	if !moved {
		t.Error("the move is not logged")
	}

	// With an advertise host, pinned addresses are advertised by it.
	p2, _ := start(t, up, func(c *Config) {
		c.Listen, c.AdvertiseHost = "127.0.0.1:0", "proxy.example"
		c.BrokerPortBase = base
	})
	c2 := dial(t, p2.Addr())
	got = askMetadata(t, c2, 1)
	if addrOf(got[1]) != "proxy.example:"+strconv.Itoa(base+2) {
		t.Errorf("advertised %s, want proxy.example:%d", addrOf(got[1]), base+2)
	}
}

// TestPortBaseOutOfRange: node ids past port 65535 are refused, logged,
// and left unrewritten.
func TestPortBaseOutOfRange(t *testing.T) {
	a, _ := heartbeatBroker(t)
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return []kmsg.MetadataResponseBroker{broker(100, a)} })
	p, ev := start(t, up, func(c *Config) { c.BrokerPortBase = 65500 })
	got := askMetadata(t, dial(t, p.Addr()), 1)
	if addrOf(got[0]) != a {
		t.Errorf("advertised %s, want the broker's own %s", addrOf(got[0]), a)
	}
	p.Close()
	faultsContaining(t, ev, "past port 65535")
}

// TestListenerLimit: with MaxListeners 2, a response advertising five
// brokers gets two listeners; the other three keep their addresses and
// each is logged once, however many responses name it.
func TestListenerLimit(t *testing.T) {
	var brokers []kmsg.MetadataResponseBroker
	for i := int32(0); i < 5; i++ {
		brokers = append(brokers, broker(i, "10.0.0."+strconv.Itoa(int(i)+1)+":9092"))
	}
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return brokers })
	p, ev := start(t, up, func(c *Config) { c.MaxListeners = 2 })
	got := askMetadata(t, dial(t, p.Addr()), 1)
	proxied := 0
	for i, b := range got {
		if addrOf(b) != addrOf(brokers[i]) {
			proxied++
		}
	}
	if proxied != 2 || len(p.Listeners()) != 3 {
		t.Errorf("%d brokers rewritten, %d listeners; want 2 and 3 (with the first)", proxied, len(p.Listeners()))
	}
	c := dial(t, p.Addr())
	for range 3 {
		askMetadata(t, c, 1)
	}
	p.Close()
	n := 0
	for _, e := range ev.of(EventFault) {
		if strings.Contains(e.Detail, "listener limit 2 reached") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d listener-limit faults, want 3", n)
	}
}

// TestListenerLimitSaidBounded: brokers beyond the listener limit are
// named each in one fault up to maxOverLimitNamed of them, the last
// saying that further ones are not: a broker naming ever new addresses
// cannot grow the proxy's memory or its log without bound.
func TestListenerLimitSaidBounded(t *testing.T) {
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return nil })
	p, ev := start(t, up, func(c *Config) { c.MaxListeners = 1 })
	for i := range maxOverLimitNamed + 10 {
		p.overListenerLimit("10.1."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256)+":9092", int32(i))
		p.overListenerLimit("10.1.0.0:9092", 0) // said already
	}
	p.Close()
	var said []string
	for _, e := range ev.of(EventFault) {
		if strings.Contains(e.Detail, "listener limit 1 reached") {
			said = append(said, e.Detail)
		}
	}
	if len(said) != maxOverLimitNamed || !strings.Contains(said[len(said)-1], "further ones are left unrewritten without a message each") {
		t.Fatalf("%d faults, the last %q; want %d, the last saying further ones are not named", len(said), said[max(len(said)-1, 0):], maxOverLimitNamed)
	}
	if len(p.overLimit) != maxOverLimitNamed {
		t.Errorf("%d brokers remembered, want %d", len(p.overLimit), maxOverLimitNamed)
	}
}

// TestPortBaseListenerLimit: listeners that BrokerPortBase opens count
// against MaxListeners, as every node id a response names would
// otherwise get one (a response naming thousands of nodes opened
// thousands, never closed); those BrokerListen names do not count.
func TestPortBaseListenerLimit(t *testing.T) {
	base := freePorts(t, 6)
	var brokers []kmsg.MetadataResponseBroker
	for i := int32(0); i < 5; i++ {
		brokers = append(brokers, broker(i, "10.0.0."+strconv.Itoa(int(i)+1)+":9092"))
	}
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return brokers })
	pin4 := "127.0.0.1:" + strconv.Itoa(base+5)
	p, ev := start(t, up, func(c *Config) {
		c.MaxListeners, c.BrokerPortBase, c.BrokerListen = 2, base, map[int32]string{4: pin4}
	})
	got := askMetadata(t, dial(t, p.Addr()), 1)
	var proxied []string
	for i, b := range got {
		if addrOf(b) != addrOf(brokers[i]) {
			proxied = append(proxied, addrOf(b))
		}
	}
	p.mu.Lock()
	pinned := len(p.byNode)
	p.mu.Unlock()
	want := []string{"127.0.0.1:" + strconv.Itoa(base), "127.0.0.1:" + strconv.Itoa(base+1), pin4}
	if !slices.Equal(proxied, want) || pinned != 3 {
		t.Errorf("brokers rewritten to %v, %d pinned listeners; want %v and 3", proxied, pinned, want)
	}
	p.Close()
	faultsContaining(t, ev, "listener limit 2 reached: broker 10.0.0.3:9092 (node 2)")
}

// TestIdleListenerClosedPortBase: a listener BrokerPortBase opened, which
// counts against MaxListeners, is closed when idle as unpinned ones are
// (its node gone, it would hold its place under the limit for good); one
// BrokerListen names stays. The node's next advertisement opens it again,
// on the same port.
func TestIdleListenerClosedPortBase(t *testing.T) {
	base := freePorts(t, 4)
	var mu sync.Mutex
	current := []kmsg.MetadataResponseBroker{broker(1, "10.0.0.1:9092"), broker(2, "10.0.0.2:9092")}
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker {
		mu.Lock()
		defer mu.Unlock()
		return append([]kmsg.MetadataResponseBroker(nil), current...)
	})
	const idle = time.Hour // the proxy's own check never runs in this test
	pin2 := "127.0.0.1:" + strconv.Itoa(base+2)
	p, ev := start(t, up, func(c *Config) {
		c.ListenerIdle, c.MaxListeners, c.BrokerPortBase, c.BrokerListen = idle, 1, base, map[int32]string{2: pin2}
	})
	c := dial(t, p.Addr())
	askMetadata(t, c, 1)
	// Node 1 goes; node 3 comes, and finds the limit taken.
	mu.Lock()
	current[0] = broker(3, "10.0.0.3:9092")
	mu.Unlock()
	if got := askMetadata(t, c, 2); addrOf(got[0]) != "10.0.0.3:9092" {
		t.Fatalf("node 3 advertised at %s, want its own address (the limit is taken)", addrOf(got[0]))
	}
	p.closeIdle(time.Now().Add(2*idle), idle)
	p.mu.Lock()
	_, one := p.byNode[1]
	_, two := p.byNode[2]
	p.mu.Unlock()
	if one || !two {
		t.Errorf("after the idle check: node 1's listener open %v, node 2's %v; want false, true", one, two)
	}
	if got := askMetadata(t, c, 3); addrOf(got[0]) != "127.0.0.1:"+strconv.Itoa(base+3) {
		t.Errorf("node 3 advertised at %s, want port %d", addrOf(got[0]), base+3)
	}
	p.Close()
	var closed bool
	for _, e := range ev.of(EventUnlisten) {
		closed = closed || strings.Contains(e.Detail, "for broker 10.0.0.1:9092")
	}
	if !closed {
		t.Error("the close is not logged")
	}
}

// TestIdleListenerClosed: a per-broker listener that has no connection
// and is not advertised again is closed and logged; one with an open
// connection stays; an advertisement opens one again. The check runs at
// chosen times (closeIdle), so nothing depends on the machine's speed.
func TestIdleListenerClosed(t *testing.T) {
	a, _ := heartbeatBroker(t)
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return []kmsg.MetadataResponseBroker{broker(1, a)} })
	const idle = time.Hour // the proxy's own check never runs in this test
	p, ev := start(t, up, func(c *Config) { c.ListenerIdle = idle })
	later := func() time.Time { return time.Now().Add(2 * idle) }
	c := dial(t, p.Addr())
	l1 := addrOf(askMetadata(t, c, 1)[0])
	p.closeIdle(time.Now(), idle)
	if _, ok := p.Listeners()[a]; !ok {
		t.Fatal("a listener just advertised was closed")
	}
	// A connection through it keeps it open however long it lasts.
	held := dial(t, l1)
	if err := exchange(held, 1); err != nil {
		t.Fatal(err)
	}
	p.closeIdle(later(), idle)
	if err := exchange(held, 2); err != nil {
		t.Fatalf("a listener with a connection was closed: %v", err)
	}
	held.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p.closeIdle(later(), idle)
		if _, ok := p.Listeners()[a]; !ok {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := p.Listeners()[a]; ok {
		t.Fatal("an idle listener was not closed")
	}
	if c, err := net.DialTimeout("tcp", l1, 2*time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after its listener was closed", l1)
	}
	l2 := addrOf(askMetadata(t, c, 2)[0])
	if err := exchange(dial(t, l2), 3); err != nil {
		t.Fatalf("the listener opened again: %v", err)
	}
	p.Close()
	var closed bool
	for _, e := range ev.of(EventUnlisten) {
		closed = closed || strings.Contains(e.Detail, "for broker "+a+": not advertised and no connection")
	}
	if !closed {
		t.Error("the close is not logged")
	}
}

// TestIdleListenerCheckRuns: with a short ListenerIdle the proxy's own
// check closes an unused listener (eventually: only that it happens is
// asserted).
func TestIdleListenerCheckRuns(t *testing.T) {
	a, _ := heartbeatBroker(t)
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return []kmsg.MetadataResponseBroker{broker(1, a)} })
	p, _ := start(t, up, func(c *Config) { c.ListenerIdle = 20 * time.Millisecond })
	askMetadata(t, dial(t, p.Addr()), 1)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := p.Listeners()[a]; !ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the idle listener was never closed")
}
