package stats

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// refErrors is bodyErrors written another way (recursive descent over the
// tokens, where bodyErrors keeps a stack), as a reference.
func refErrors(d *json.Decoder, key string, out *[]int16) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		for d.More() {
			k := ""
			if t == '{' {
				kt, err := d.Token()
				if err != nil {
					return err
				}
				k = kt.(string)
			}
			if err := refErrors(d, k, out); err != nil {
				return err
			}
		}
		_, err = d.Token()
		return err
	case json.Number:
		if strings.HasSuffix(key, "ErrorCode") {
			if c, err := strconv.ParseInt(t.String(), 10, 16); err == nil {
				*out = append(*out, int16(c))
			}
		}
	}
	return nil
}

// FuzzReadJSONLines: any input reads or fails with a line number, never
// panics; a JSON body gives the codes the reference finds, in order.
func FuzzReadJSONLines(f *testing.F) {
	f.Add(`{"kind":"response","api_key":1,"version":13,"size":9,"latency_us":5,"body":{"ErrorCode":3,"T":[{"ErrorCode":6}]}}`)
	f.Add(`{"event":"open","conn":1}` + "\n" + `{"kind":"request","api_key":1,"version":13,"conn":1}`)
	f.Add(`{"ErrorCode":[1,{"ErrorCode":2}],"a":{"b":{}},"XErrorCode":-1}`)
	f.Fuzz(func(t *testing.T, in string) {
		a := New()
		_, err := ReadJSONLines(strings.NewReader(in), a.Add)
		if err != nil && !strings.HasPrefix(err.Error(), "line ") {
			t.Fatalf("error without a line: %v", err)
		}
		a.Summary()
		if !json.Valid([]byte(in)) {
			return
		}
		got, err := bodyErrors(json.RawMessage(in))
		if err != nil {
			t.Fatalf("valid JSON: %v", err)
		}
		d := json.NewDecoder(strings.NewReader(in))
		d.UseNumber()
		var want []int16
		if err := refErrors(d, "", &want); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %v, reference %v", in, got, want)
		}
	})
}
