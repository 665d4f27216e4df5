package report

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
)

// TestCandidatesSmallestFindThemselves: the smallest instance of every
// 4.3 response is among its own candidates (the schemas ruled out by
// their smallest frame's size never include one that decodes), and on
// every tenth, the search finds exactly what decoding and re-encoding with
// every response schema finds.
func TestCandidatesSmallestFindThemselves(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	checked, brute := 0, 0
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for v := api.Response.Valid.Lo; v <= api.Response.Valid.Hi; v++ {
			b, err := sample.Encode(c, api, schema.TypeResponse, v)
			if err != nil {
				t.Fatalf("%s v%d: %v", api.Name, v, err)
			}
			got, incomplete, tried := candidates(c, b, nil, false)
			self := Candidate{APIKey: api.Key, Name: api.Name, Version: v}
			if !incomplete && !slices.Contains(got, self) {
				t.Errorf("%s v%d (%d bytes): not among its candidates %v", api.Name, v, len(b), got)
			}
			if fits := fitting(c, len(b)); tried > fits {
				t.Errorf("%s v%d: %d schemas tried, %d have a smallest frame of at most %d bytes", api.Name, v, tried, fits, len(b))
			}
			checked++
			if checked%10 != 0 || incomplete {
				continue
			}
			if want := bruteCandidates(c, b); !slices.Equal(sortedCandidates(got), want) {
				t.Errorf("%s v%d: candidates %v, every schema tried finds %v", api.Name, v, got, want)
			}
			brute++
		}
	}
	if checked < 300 || brute < 20 {
		t.Errorf("checked %d responses, %d against every schema", checked, brute)
	}
}

// fitting counts the response schemas whose smallest frame is at most n
// bytes.
func fitting(c *codec.Codec, n int) int {
	k := 0
	for _, api := range c.Reg.APIs {
		if api.Reserved() || api.Response.Valid.Empty() {
			continue
		}
		for v := api.Response.Valid.Lo; v <= api.Response.Valid.Hi; v++ {
			if m, ok := c.MinFrameSize(api.Response, v); !ok || m <= n {
				k++
			}
		}
	}
	return k
}

// bruteCandidates decodes and re-encodes b with every response schema.
func bruteCandidates(c *codec.Codec, b []byte) []Candidate {
	var out []Candidate
	for _, api := range c.Reg.APIs {
		if api.Reserved() || api.Response.Valid.Empty() {
			continue
		}
		for v := api.Response.Valid.Lo; v <= api.Response.Valid.Hi; v++ {
			f, err := c.DecodeResponse(b, api, v, codec.Options{})
			if err != nil {
				continue
			}
			if enc, err := c.EncodeResponse(nil, f); err == nil && string(enc) == string(b) {
				out = append(out, Candidate{APIKey: api.Key, Name: api.Name, Version: v})
			}
		}
	}
	return sortedCandidates(out)
}

func sortedCandidates(cs []Candidate) []Candidate {
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(a, b Candidate) int {
		if a.APIKey != b.APIKey {
			return int(a.APIKey) - int(b.APIKey)
		}
		return int(a.Version) - int(b.Version)
	})
	return cs
}

// TestCandidatesLean: a lean search of a 14-byte response (SyncGroup v0:
// no error, an empty assignment) tries a handful of schemas, in
// proportion to its size, and says it stopped; the full search tries
// many more and finds it.
func TestCandidatesLean(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := binary.BigEndian.AppendUint32(nil, 10)
	b = binary.BigEndian.AppendUint32(b, 7) // correlation id
	b = append(b, 0, 0, 0, 0, 0, 0)         // error_code, assignment (empty)
	full, fullCut, fullTried := candidates(c, b, nil, false)
	if fullCut || fullTried < 20 || !slices.Contains(full, Candidate{APIKey: 14, Name: "SyncGroup", Version: 0}) {
		t.Errorf("full search: %d tried, cut %v, found %v", fullTried, fullCut, full)
	}
	lean, leanCut, leanTried := candidates(c, b, nil, true)
	if !leanCut || leanTried > 32*len(b)/candidateTryCost+1 || leanTried == 0 {
		t.Errorf("lean search: %d tried, cut %v", leanTried, leanCut)
	}
	if len(lean) > len(full) || !slices.Equal(lean, full[:len(lean)]) {
		t.Errorf("lean search found %v, the full one %v", lean, full)
	}
	// An orphan and a request that may be a response take the lean search
	// from their options.
	if f := Orphan(c, b, nil, Options{LeanSearch: true}); !f.CandidatesIncomplete || !f.SearchCut() {
		t.Errorf("lean orphan: incomplete %v", f.CandidatesIncomplete)
	}
	if f := Orphan(c, b, nil, Options{}); f.CandidatesIncomplete || f.SearchCut() {
		t.Errorf("orphan: incomplete %v", f.CandidatesIncomplete)
	}
	req := []byte{0, 0, 0, 11, 0, 0, 0, 9, 0, 0, 0, 0, 0, 1, 'x'} // Produce v9, cut in its header
	if f := Decode(c, req, Options{MaybeResponse: true}); f.SearchCut() || len(f.AsResponse) == 0 {
		t.Errorf("request as a response: %v, cut %v", f.AsResponse, f.SearchCut())
	}
	if f := Decode(c, req, Options{MaybeResponse: true, LeanSearch: true}); !f.SearchCut() {
		t.Errorf("request as a response, lean: %v, cut %v", f.AsResponse, f.SearchCut())
	}
}
