package tlstest

import (
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/capdecode"
	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

var (
	regOnce sync.Once
	reg     *schema.Registry
	regErr  error
)

// readOptions are the options decode --pcap reads a capture with: the
// APIs of Kafka 4.3's spec, frames found by resynchronisation confirmed
// by decoding them.
func readOptions(t *testing.T) capture.Options {
	t.Helper()
	dir := testshared.Spec(t, "4.3")
	regOnce.Do(func() { reg, regErr = schema.Load(dir) })
	if regErr != nil {
		t.Fatalf("loading the spec: %v", regErr)
	}
	return capdecode.Options(codec.New(reg), nil)
}
