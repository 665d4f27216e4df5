package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/manifester/manifester/internal/testdeadline"
)

// kcat runs kcat (librdkafka), stopped at the test's deadline, and returns
// its stdout.
func kcat(t *testing.T, bin string, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := testdeadline.From(t, context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\nstderr: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// TestKcatThroughProxy drives librdkafka, a second independent client,
// through the proxy: metadata, produce, consume. Every frame must decode
// and round-trip, and kcat must get its messages back.
func TestKcatThroughProxy(t *testing.T) {
	bin := requireTool(t, "kcat")
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(2, "kcat-topic"), kfake.MaxVersions(specVersions(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := &recorder{}
	p := startProxy(t, c, rec)
	addr := p.Addr()

	meta := kcat(t, bin, "", "-b", addr, "-L")
	if !strings.Contains(meta, "kcat-topic") || !strings.Contains(meta, "2 brokers") {
		t.Errorf("kcat -L through the proxy:\n%s", meta)
	}
	for up := range p.Listeners() {
		if strings.Contains(meta, up) {
			t.Errorf("kcat -L shows the broker's own address %s, not the proxy's:\n%s", up, meta)
		}
	}
	msgs := []string{"first message", "second message", "third message", "fourth message"}
	kcat(t, bin, strings.Join(msgs, "\n")+"\n", "-b", addr, "-t", "kcat-topic", "-P", "-p", "0")
	got := kcat(t, bin, "", "-b", addr, "-t", "kcat-topic", "-C", "-p", "0", "-o", "beginning", "-e", "-q")
	if strings.TrimSpace(got) != strings.Join(msgs, "\n") {
		t.Errorf("kcat consumed %q, want %q", got, msgs)
	}
	p.Close()

	apis := checkFrames(t, rec.all())
	for _, want := range []string{"ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets"} {
		if apis["request "+want] == 0 || apis["response "+want] == 0 {
			t.Errorf("no %s exchange from kcat (saw %v)", want, apis)
		}
	}
}
