package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/testcert"
)

// TestKcatOverTLSThroughProxy: kcat (librdkafka) speaks TLS to the proxy
// (-X security.protocol=ssl with the test's CA), the proxy speaks mutual
// TLS to a kfake cluster: metadata names the proxy's listeners only,
// produce and consume work, every frame decodes and round-trips.
// librdkafka's SASL needs SaslHandshake v0, which kfake lacks, so SASL is
// tested with kgo (internal/cli, internal/proxy).
func TestKcatOverTLSThroughProxy(t *testing.T) {
	bin := requireTool(t, "kcat")
	brokerCerts, proxyCerts := testcert.New(t, "broker"), testcert.New(t, "proxy")
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(2, "kcat-tls"), kfake.MaxVersions(specVersions(t)),
		kfake.TLS(brokerCerts.ServerConfig(true)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := proxy.ServerTLS(proxyCerts.ServerCert, proxyCerts.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	up, err := proxy.UpstreamTLS(brokerCerts.CAFile, "", brokerCerts.ClientCert, brokerCerts.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p, err := proxy.New(proxy.Config{
		Listen: "127.0.0.1:0", Upstream: c.ListenAddrs()[0], Codec: newCodec(t),
		Roundtrip: true, Sink: rec.sink, DialTimeout: 5 * time.Second, TLS: srv, UpstreamTLS: up,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ssl := []string{"-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + proxyCerts.CAFile}
	meta := kcat(t, bin, "", append([]string{"-b", p.Addr(), "-L"}, ssl...)...)
	if !strings.Contains(meta, "kcat-tls") || !strings.Contains(meta, "2 brokers") {
		t.Errorf("kcat -L over TLS through the proxy:\n%s", meta)
	}
	for brokerAddr := range p.Listeners() {
		if brokerAddr != c.ListenAddrs()[0] && strings.Contains(meta, brokerAddr) {
			t.Errorf("kcat -L shows the broker's own address %s:\n%s", brokerAddr, meta)
		}
	}
	msgs := []string{"tls one", "tls two", "tls three"}
	kcat(t, bin, strings.Join(msgs, "\n")+"\n", append([]string{"-b", p.Addr(), "-t", "kcat-tls", "-P", "-p", "0"}, ssl...)...)
	got := kcat(t, bin, "", append([]string{"-b", p.Addr(), "-t", "kcat-tls", "-C", "-p", "0", "-o", "beginning", "-e", "-q"}, ssl...)...)
	if strings.TrimSpace(got) != strings.Join(msgs, "\n") {
		t.Errorf("kcat consumed %q over TLS, want %q", got, msgs)
	}
	p.Close()
	apis := checkFrames(t, rec.all())
	for _, want := range []string{"ApiVersions", "Metadata", "Produce", "Fetch"} {
		if apis["request "+want] == 0 || apis["response "+want] == 0 {
			t.Errorf("no %s exchange from kcat over TLS (saw %v)", want, apis)
		}
	}
}
