// Package e2e runs real Kafka peers through manifester: franz-go's
// in-process broker (kfake) and client (kgo), and kcat (librdkafka),
// through the decoding proxy; and captures of that traffic through
// `decode --pcap` and tshark.
package e2e

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
)

var specDir = testshared.SpecPath("4.3")

var (
	regOnce sync.Once
	reg     *schema.Registry
	regErr  error
)

func newCodec(t testing.TB) *codec.Codec {
	t.Helper()
	testshared.Dir(t)
	regOnce.Do(func() { reg, regErr = schema.Load(specDir) })
	if regErr != nil {
		t.Fatalf("loading specs: %v", regErr)
	}
	return codec.New(reg)
}

// specVersions caps every API at the highest version the 4.3 specs
// define: kgo and kfake know newer versions (ApiVersions v5) that the specs
// we decode with do not, and a frame at an unknown version is rightly
// reported as an error.
func specVersions(t testing.TB) *kversion.Versions {
	newCodec(t)
	vs := new(kversion.Versions)
	for _, api := range reg.APIs {
		if !api.Reserved() {
			vs.SetMaxKeyVersion(api.Key, api.Request.Valid.Hi)
		}
	}
	return vs
}

// recorder collects the proxy's events.
type recorder struct {
	mu     sync.Mutex
	events []*proxy.Event
}

func (r *recorder) sink(e *proxy.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) all() []*proxy.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// startProxy starts a proxy in front of the cluster's first broker.
func startProxy(t *testing.T, c *kfake.Cluster, rec *recorder) *proxy.Proxy {
	t.Helper()
	p, err := proxy.New(proxy.Config{
		Listen: "127.0.0.1:0", Upstream: c.ListenAddrs()[0], Codec: newCodec(t),
		Roundtrip: true, Sink: rec.sink, DialTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// scenario is what the client observes; it must be the same with and
// without the proxy.
type scenario struct {
	CreateErrors   []int16
	Produced       int
	Consumed       []string
	Committed      map[int32]int64
	ListOffsets    map[int32]int64
	Configs        map[string]string
	DeleteErrors   []int16
	TopicsAfterDel []string
}

const topic = "manifester-e2e"

// runScenario creates a topic, produces, consumes with a group, commits,
// lists offsets, describes configs and deletes the topic.
func runScenario(t *testing.T, seed string) scenario {
	t.Helper()
	ctx, cancel := testdeadline.From(t, context.Background())
	defer cancel()
	var s scenario
	admin, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.MaxVersions(specVersions(t)), kgo.RequestTimeoutOverhead(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 3, 1
	ct.Topics = append(ct.Topics, rt)
	ctr, err := ct.RequestWith(ctx, admin)
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
	for _, tp := range ctr.Topics {
		s.CreateErrors = append(s.CreateErrors, tp.ErrorCode)
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.MaxVersions(specVersions(t)), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := 0; i < 30; i++ {
		recs = append(recs, &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte(fmt.Sprintf("value %02d", i)),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{byte(i)}}}})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	prod.Close()
	s.Produced = len(recs)

	cons, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.MaxVersions(specVersions(t)), kgo.ConsumerGroup("manifester-group"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for len(s.Consumed) < len(recs) {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(s.Consumed), len(recs), err)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Errorf("fetch %s/%d: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) { s.Consumed = append(s.Consumed, string(r.Key)+"="+string(r.Value)) })
	}
	sort.Strings(s.Consumed)
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cons.Close()

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = "manifester-group"
	ofr, err := of.RequestWith(ctx, admin)
	if err != nil {
		t.Fatalf("offset fetch: %v", err)
	}
	s.Committed = map[int32]int64{}
	for _, tp := range ofr.Topics {
		for _, p := range tp.Partitions {
			s.Committed[p.Partition] = p.Offset
		}
	}
	for _, g := range ofr.Groups {
		for _, tp := range g.Topics {
			for _, p := range tp.Partitions {
				s.Committed[p.Partition] = p.Offset
			}
		}
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	for p := int32(0); p < 3; p++ {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = p, -1
		lt.Partitions = append(lt.Partitions, lp)
	}
	lo.Topics = append(lo.Topics, lt)
	lor, err := lo.RequestWith(ctx, admin)
	if err != nil {
		t.Fatalf("list offsets: %v", err)
	}
	s.ListOffsets = map[int32]int64{}
	for _, tp := range lor.Topics {
		for _, p := range tp.Partitions {
			s.ListOffsets[p.Partition] = p.Offset
		}
	}

	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	dc.Resources = append(dc.Resources, dr)
	dcr, err := dc.RequestWith(ctx, admin)
	if err != nil {
		t.Fatalf("describe configs: %v", err)
	}
	s.Configs = map[string]string{}
	for _, r := range dcr.Resources {
		for _, c := range r.Configs {
			v := "<null>"
			if c.Value != nil {
				v = *c.Value
			}
			s.Configs[c.Name] = v
		}
	}

	dt := kmsg.NewPtrDeleteTopicsRequest()
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	name := topic
	dtt.Topic = &name
	dt.Topics = append(dt.Topics, dtt)
	dt.TopicNames = []string{topic}
	dtr, err := dt.RequestWith(ctx, admin)
	if err != nil {
		t.Fatalf("delete topics: %v", err)
	}
	for _, tp := range dtr.Topics {
		s.DeleteErrors = append(s.DeleteErrors, tp.ErrorCode)
	}
	md := kmsg.NewPtrMetadataRequest()
	mdr, err := md.RequestWith(ctx, admin)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	for _, tp := range mdr.Topics {
		if tp.Topic != nil {
			s.TopicsAfterDel = append(s.TopicsAfterDel, *tp.Topic)
		}
	}
	return s
}

func newCluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(specVersions(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// checkFrames asserts that every frame the proxy saw decoded cleanly and
// round-tripped, and returns the APIs seen.
func checkFrames(t *testing.T, events []*proxy.Event) map[string]int {
	t.Helper()
	apis := map[string]int{}
	for _, e := range events {
		switch e.Kind {
		case proxy.EventFault, proxy.EventSkipped:
			t.Errorf("proxy %s: conn %d %s: %s", e.Kind, e.Conn, e.Dir, e.Detail)
		case proxy.EventFrame:
			f := e.Frame
			if f == nil {
				t.Errorf("frame event without a report")
				continue
			}
			if f.Error != "" {
				t.Errorf("%s: %s", f.Summary(), f.Error)
			}
			if f.Roundtrip == nil || !*f.Roundtrip {
				t.Errorf("%s: does not round-trip: %+v", f.Summary(), f.RoundtripDiff)
			}
			apis[f.Kind+" "+f.API]++
		}
	}
	return apis
}

func TestKgoThroughProxy(t *testing.T) {
	direct := runScenario(t, newCluster(t).ListenAddrs()[0])

	c := newCluster(t)
	rec := &recorder{}
	p := startProxy(t, c, rec)
	via := runScenario(t, p.Addr())

	// DescribeCluster (not part of the client-visible comparison: its
	// answer is addresses) must name proxy listeners only.
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr()), kgo.MaxVersions(specVersions(t)))
	if err != nil {
		t.Fatal(err)
	}
	dcr, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(context.Background(), cl)
	cl.Close()
	if err != nil {
		t.Fatalf("describe cluster: %v", err)
	}
	p.Close()
	described := map[string]bool{}
	for _, b := range dcr.Brokers {
		described[net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))] = true
	}

	if fmt.Sprint(direct) != fmt.Sprint(via) {
		t.Errorf("the client saw different results through the proxy:\ndirect: %+v\nproxy:  %+v", direct, via)
	}
	if len(via.Consumed) != 30 || via.ListOffsets[0]+via.ListOffsets[1]+via.ListOffsets[2] != 30 {
		t.Errorf("scenario did not run fully: %+v", via)
	}
	events := rec.all()
	apis := checkFrames(t, events)
	for _, want := range []string{"CreateTopics", "Produce", "Fetch", "JoinGroup", "SyncGroup", "OffsetCommit",
		"OffsetFetch", "ListOffsets", "DescribeConfigs", "DeleteTopics", "Metadata", "FindCoordinator", "ApiVersions"} {
		if apis["request "+want] == 0 || apis["response "+want] == 0 {
			t.Errorf("no %s request and response through the proxy (saw %v)", want, apis)
		}
	}

	// The client only ever learnt proxy addresses: every Metadata
	// response it got (decoded here by kmsg, an independent decoder)
	// names proxy listeners, and every broker got its own listener.
	listeners := p.Listeners()
	if len(listeners) != 3 {
		t.Errorf("listeners %v, want one per broker (3)", listeners)
	}
	local := map[string]bool{}
	for _, l := range listeners {
		local[l] = true
	}
	if len(described) != 3 {
		t.Errorf("DescribeCluster named %v, want 3 brokers", described)
	}
	for a := range described {
		if !local[a] {
			t.Errorf("DescribeCluster told the client about %s, not a proxy listener", a)
		}
	}
	// Every FindCoordinator answer (read by kmsg) names a proxy listener.
	coordinators := 0
	for _, e := range events {
		if e.Kind != proxy.EventFrame || e.Dir != "response" || e.Frame.API != "FindCoordinator" {
			continue
		}
		resp := kmsg.NewPtrFindCoordinatorResponse()
		resp.Version = e.Frame.Version
		if err := resp.ReadFrom(e.Data[9:]); err != nil {
			t.Fatalf("kmsg cannot read the forwarded FindCoordinator response: %v", err)
		}
		for _, c := range resp.Coordinators {
			coordinators++
			if !local[net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))] {
				t.Errorf("coordinator %s:%d is not a proxy listener", c.Host, c.Port)
			}
		}
	}
	if coordinators == 0 {
		t.Error("no FindCoordinator coordinators seen")
	}
	rewritten := 0
	for _, e := range events {
		if e.Kind != proxy.EventFrame || e.Dir != "response" || e.Frame.API != "Metadata" {
			continue
		}
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = e.Frame.Version
		hdr := 8
		if resp.IsFlexible() {
			hdr = 9
		}
		if err := resp.ReadFrom(e.Data[hdr:]); err != nil {
			t.Fatalf("kmsg cannot read the forwarded Metadata response: %v", err)
		}
		for _, b := range resp.Brokers {
			if !local[net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))] {
				t.Errorf("client was told about broker %s:%d, not a proxy listener", b.Host, b.Port)
			}
		}
		if e.Rewritten {
			rewritten++
		}
	}
	if rewritten == 0 {
		t.Error("no Metadata response was rewritten")
	}

	// A capture of the same traffic gives the same frames.
	checkCaptureOfProxy(t, events)
}
