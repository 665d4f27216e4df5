package schema_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/testshared"
)

// pairedResponse is added to every fuzz input that is a request, so that
// the request can build into an API.
const pairedResponse = `{"apiKey": 1000, "type": "response", "name": "EveryTypeResponse", "validVersions": "0-2", "flexibleVersions": "1+", "fields": []}`

// FuzzSpec feeds arbitrary spec files through parsing, checking, plan
// building and the smallest-instance encode/decode. Nothing may panic or
// hang; every error must be a spec.ErrorList whose positions lie in the
// file. Seeds: the hand-written fixtures and a few Kafka specs (read in
// place), and a self-referencing struct.
func FuzzSpec(f *testing.F) {
	var seeds []string
	for _, glob := range []string{"../../testdata/specs/bad/*/*.json", "../../testdata/specs/everytype/*.json"} {
		names, _ := filepath.Glob(glob)
		seeds = append(seeds, names...)
	}
	for _, n := range []string{"AlterConfigsRequest.json", "FetchResponse.json", "ConsumerGroupHeartbeatResponse.json"} {
		seeds = append(seeds, filepath.Join(testshared.Spec(f, "4.3"), n))
	}
	for _, n := range seeds {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"apiKey": 1000, "type": "request", "name": "EveryTypeRequest", "validVersions": "0-2", "flexibleVersions": "1+",
		"fields": [{"name": "S", "type": "Loop", "versions": "0+"}],
		"commonStructs": [{"name": "Loop", "versions": "0+", "fields": [{"name": "Again", "type": "Loop", "versions": "0+"}]}]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		file, err := spec.Parse("F.json", src)
		if err != nil {
			checkPositions(t, err, src)
			return
		}
		files := []*spec.File{file}
		if file.Message.Type.S == "request" && file.Message.Name.S == "EveryTypeRequest" {
			resp, err := spec.Parse("R.json", []byte(pairedResponse))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, resp)
		}
		reg, err := schema.Build(files)
		if err != nil {
			checkPositions(t, err, src)
			return
		}
		c := codec.New(reg)
		for _, api := range reg.APIs {
			if api.Reserved() {
				continue
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi && v-api.Request.Valid.Lo < 4; v++ {
				b, err := sample.Encode(c, api, schema.TypeRequest, v)
				if err != nil {
					continue // e.g. a struct nested deeper than the sample builder goes
				}
				if _, err := c.DecodeRequest(b, codec.Options{Spans: true}); err != nil {
					t.Errorf("%s v%d: our own smallest request does not decode: %v", api.Name, v, err)
				}
			}
		}
	})
}

func checkPositions(t *testing.T, err error, src []byte) {
	t.Helper()
	var list spec.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T is not a spec.ErrorList: %v", err, err)
	}
	lines := strings.Count(string(src), "\n") + 1
	for _, e := range list {
		if e.Pos.Line < 0 || e.Pos.Line > lines || (e.Pos.Line > 0 && e.Pos.Col < 1) {
			t.Errorf("position %s outside a file of %d lines: %v", e.Pos, lines, e)
		}
	}
}
