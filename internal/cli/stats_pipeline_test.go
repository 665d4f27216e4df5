package cli

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/manifester/manifester/internal/capdecode"
	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/selector"
	"github.com/manifester/manifester/internal/stats"
)

// TestStatsPipelineOrder: stats --pcap decodes on every core (package
// pipeline) and adds the same records, in the same order, as the one-by-one
// stats.ReadCapture.
func TestStatsPipelineOrder(t *testing.T) {
	reg, err := schema.Load(decSpec)
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	var xs []pcapExchange
	for range 40 {
		xs = append(xs, pcapExchanges()...)
	}
	path := writePcap(t, xs, capture.PCAP, true, 0)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var one, par []stats.Record
	if _, err := stats.ReadCapture(bytes.NewReader(data), capdecode.Options(c, nil), c, func(r *stats.Record) { one = append(one, *r) }); err != nil {
		t.Fatal(err)
	}
	if _, err := readCaptureStats(bytes.NewReader(data), capdecode.Options(c, nil), c, nil, func(r *stats.Record) { par = append(par, *r) }, nil); err != nil {
		t.Fatal(err)
	}
	// With a filter that admits every frame, the workers decode every
	// frame for it and make the records from those decodes: the same.
	flt, err := compileFilter("size > 0", reg)
	if err != nil {
		t.Fatal(err)
	}
	var filtered []stats.Record
	if _, err := readCaptureStats(bytes.NewReader(data), capdecode.Options(c, nil), c, selector.New(c, flt), func(r *stats.Record) { filtered = append(filtered, *r) }, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, filtered) {
		t.Fatalf("the filtered pipeline's %d records differ from the %d read one by one", len(filtered), len(one))
	}
	if len(one) != 2*len(xs) {
		t.Fatalf("%d records one by one, want %d", len(one), 2*len(xs))
	}
	if !reflect.DeepEqual(one, par) {
		t.Fatalf("the pipeline's %d records differ from the %d read one by one", len(par), len(one))
	}
	errs := 0
	for _, r := range par {
		errs += len(r.Errors)
	}
	if errs == 0 {
		t.Error("no response's error codes were read (the Heartbeat responses carry 27)")
	}
}
