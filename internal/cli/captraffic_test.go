package cli

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testframes"
)

// Traffic with known contents for the --filter, topic-id and stats tests:
// every frame is encoded by franz-go's kmsg, every response comes a known
// time after its request.

// trafficX is one exchange: resp is nil for a request without a response.
type trafficX struct {
	req, resp []byte
	lat       time.Duration
}

// trafficConn is one connection of the capture.
type trafficConn struct {
	client, server netip.AddrPort
	xs             []trafficX
}

var (
	topicOrders   = [16]byte{0x0a, 0x0b, 0x0c, 0x0d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	topicPayments = [16]byte{0x0e, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	trafficServer = netip.MustParseAddrPort("10.0.0.2:9092")
)

func fetchReq(id [16]byte) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.ReplicaID, r.MaxWaitMillis, r.MaxBytes = 13, -1, 500, 1<<20
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = id
	p := kmsg.NewFetchRequestTopicPartition()
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// fetchResp answers for topic id with one partition per error code.
func fetchResp(id [16]byte, errs ...int16) *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	r.Version = 13
	t := kmsg.NewFetchResponseTopic()
	t.TopicID = id
	for i, e := range errs {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.ErrorCode = int32(i), e
		t.Partitions = append(t.Partitions, p)
	}
	r.Topics = append(r.Topics, t)
	return r
}

func metadataReq(topics ...string) *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 12
	for _, n := range topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(n)
		r.Topics = append(r.Topics, t)
	}
	return r
}

func metadataResp() *kmsg.MetadataResponse {
	r := kmsg.NewPtrMetadataResponse()
	r.Version = 12
	r.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: "b0", Port: 9092}}
	for name, id := range map[string][16]byte{"orders": topicOrders} {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic, t.TopicID = kmsg.StringPtr(name), id
		r.Topics = append(r.Topics, t)
	}
	t := kmsg.NewMetadataResponseTopic()
	t.Topic, t.TopicID = kmsg.StringPtr("payments"), topicPayments
	r.Topics = append(r.Topics, t)
	return r
}

func produceReq(topic string, acks int16) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = 9, acks, 1000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	t.Partitions = append(t.Partitions, kmsg.NewProduceRequestTopicPartition())
	r.Topics = append(r.Topics, t)
	return r
}

func produceResp(topic string, errs ...int16) *kmsg.ProduceResponse {
	r := kmsg.NewPtrProduceResponse()
	r.Version = 9
	t := kmsg.NewProduceResponseTopic()
	t.Topic = topic
	for i, e := range errs {
		p := kmsg.NewProduceResponseTopicPartition()
		p.Partition, p.ErrorCode = int32(i), e
		t.Partitions = append(t.Partitions, p)
	}
	r.Topics = append(r.Topics, t)
	return r
}

func heartbeat(corr int32, errCode int16) ([]byte, []byte) {
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version, hbr.ErrorCode = 4, errCode
	return testframes.Request("hb", hb, corr), testframes.Response(hbr, corr)
}

// trafficConns is the standard traffic:
//
//	conn 1 (billing):   Fetch v13 (orders by id, before any Metadata) 500µs;
//	                    Metadata v12 (names orders and payments) 1000µs;
//	                    Fetch v13 (orders by id; 2 partitions error 6, NOT_LEADER_OR_FOLLOWER) 2000µs;
//	                    Produce v9 (payments, 1 partition NONE) 3000µs
//	conn 2 (reporting): Fetch v13 (payments by id) 4000µs; Produce v9 acks=0 (no response)
//	conn 3 (hb):        100 Heartbeat v4, the i-th (1..100) answered after i×100µs,
//	                    every 10th with REBALANCE_IN_PROGRESS (27)
func trafficConns() []trafficConn {
	c1 := trafficConn{client: netip.MustParseAddrPort("10.0.0.1:51000"), server: trafficServer, xs: []trafficX{
		{testframes.Request("billing", fetchReq(topicOrders), 1), testframes.Response(fetchResp(topicOrders, 0), 1), 500 * time.Microsecond},
		{testframes.Request("billing", metadataReq("orders"), 2), testframes.Response(metadataResp(), 2), 1000 * time.Microsecond},
		{testframes.Request("billing", fetchReq(topicOrders), 3), testframes.Response(fetchResp(topicOrders, 6, 6), 3), 2000 * time.Microsecond},
		{testframes.Request("billing", produceReq("payments", 1), 4), testframes.Response(produceResp("payments", 0), 4), 3000 * time.Microsecond},
	}}
	c2 := trafficConn{client: netip.MustParseAddrPort("10.0.0.3:52000"), server: trafficServer, xs: []trafficX{
		{testframes.Request("reporting", fetchReq(topicPayments), 1), testframes.Response(fetchResp(topicPayments, 0), 1), 4000 * time.Microsecond},
		{testframes.Request("reporting", produceReq("payments", 0), 2), nil, 0},
	}}
	c3 := trafficConn{client: netip.MustParseAddrPort("10.0.0.4:53000"), server: trafficServer}
	for i := 1; i <= 100; i++ {
		var code int16
		if i%10 == 0 {
			code = 27
		}
		req, resp := heartbeat(int32(i), code)
		c3.xs = append(c3.xs, trafficX{req, resp, time.Duration(i) * 100 * time.Microsecond})
	}
	return []trafficConn{c1, c2, c3}
}

// writeTraffic writes the connections one after the other, each exchange
// 10 ms after the previous one, as a pcap file; it returns its path.
func writeTraffic(t *testing.T, conns []trafficConn) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	at := pcapT0
	for _, tc := range conns {
		c := w.Conn(tc.client, tc.server)
		if err := c.Open(at); err != nil {
			t.Fatal(err)
		}
		for _, x := range tc.xs {
			if err := c.Write(capture.ClientToServer, at, x.req); err != nil {
				t.Fatal(err)
			}
			if x.resp != nil {
				if err := c.Write(capture.ServerToClient, at.Add(x.lat), x.resp); err != nil {
					t.Fatal(err)
				}
			}
			at = at.Add(10 * time.Millisecond)
		}
		if err := c.Close(at); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "traffic.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
