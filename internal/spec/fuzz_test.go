package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/testshared"
)

// FuzzLoadSpec feeds a request and a response spec file to the parser and,
// when they parse, to the schema builder, the codec planner, and the
// smallest-instance encoder and decoder. Properties: no panic and no hang; every error is a
// spec.ErrorList of *spec.Error positioned in the fuzzed file (1-based line
// and column); a checked schema's smallest instances encode and decode
// back.
//
// Failing inputs the fuzzer saves under testdata/fuzz are derived from
// Kafka's spec files when seeded from them: reduce them to a synthetic
// example before committing.
func FuzzLoadSpec(f *testing.F) {
	f.Add([]byte(`{"apiKey": 90, "type": "request", "name": "XRequest", "validVersions": "0-1", "flexibleVersions": "1+", "fields": [{"name": "A", "type": "int32", "versions": "0+"}]}`),
		[]byte(`// comment
{"apiKey": 90, "type": "response", "name": "XResponse", "validVersions": "0-1", "flexibleVersions": "1+",
 "fields": [{"name": "T", "type": "[]Topic", "versions": "0+", "fields": [{"name": "N", "type": "string", "versions": "0+", "nullableVersions": "1+"},
   {"name": "G", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0}]}]}`))
	reqs, _ := filepath.Glob(filepath.Join(testshared.Spec(f, "4.3"), "*Request.json"))
	sort.Strings(reqs)
	for i, n := range reqs {
		if i%8 != 0 { // a sample of the real files keeps the seed run short
			continue
		}
		req, err1 := os.ReadFile(n)
		resp, err2 := os.ReadFile(strings.TrimSuffix(n, "Request.json") + "Response.json")
		if err1 == nil && err2 == nil {
			f.Add(req, resp)
		}
	}
	f.Fuzz(func(t *testing.T, req, resp []byte) {
		var files []*spec.File
		for _, in := range []struct {
			name string
			data []byte
		}{{"FuzzRequest.json", req}, {"FuzzResponse.json", resp}} {
			file, err := spec.Parse(in.name, in.data)
			if err != nil {
				checkSpecErr(t, err)
				return
			}
			files = append(files, file)
		}
		reg, err := schema.Build(files)
		if err != nil {
			checkSpecErr(t, err)
			return
		}
		c := codec.New(reg)
		for _, api := range reg.APIs {
			if api.Reserved() {
				continue
			}
			for _, v := range []int16{api.Request.Valid.Lo, api.Request.Valid.Hi} {
				for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
					b, err := sample.Encode(c, api, kind, v)
					if err != nil {
						continue
					}
					if kind == schema.TypeRequest {
						_, err = c.DecodeRequest(b, codec.Options{Spans: true})
					} else {
						_, err = c.DecodeResponse(b, api, v, codec.Options{Spans: true})
					}
					if err != nil {
						t.Fatalf("%s v%d %s: smallest instance does not decode: %v", api.Name, v, kind, err)
					}
				}
			}
		}
	})
}

func checkSpecErr(t *testing.T, err error) {
	t.Helper()
	var list spec.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error is not a non-empty spec.ErrorList: %T %v", err, err)
	}
	for _, e := range list {
		if !strings.HasPrefix(e.Pos.File, "Fuzz") || e.Pos.Line < 1 || e.Pos.Col < 1 {
			t.Fatalf("error without a position in a fuzzed file: %q (pos %+v)", e.Error(), e.Pos)
		}
	}
}
