package frameflow

import (
	"strings"
	"testing"
)

func TestDocuments(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: `{"A": 1}`, want: []string{`{"A": 1}`}},
		{in: "{\"a\":1}\n{\"b\":2}\n", want: []string{`{"a":1}`, `{"b":2}`}},
		// Not JSON at all: one document, for the encoder's positioned error.
		{in: `{"A": }`, want: []string{`{"A": }`}},
		{in: ``, want: []string{``}},
		{in: "{\"a\":1}\n{\"b\":", err: "JSON value 2: unexpected end of the JSON input at line 2, column 6"},
		// A later value's syntax error says where, as the first's does.
		{in: "{}\n{\"a\":1}}\n", err: "JSON value 3: invalid character '}' looking for beginning of value at line 2, column 8"},
		{in: "{}\r\n\r\n  {\"a\":tru}", err: "JSON value 2: invalid character '}' in literal true (expecting 'e') at line 3, column 11"},
	} {
		got, err := Documents([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %d documents, %v", c.in, len(got), err)
			continue
		}
		for i := range got {
			if string(got[i].Bytes) != c.want[i] || c.in[got[i].Off:got[i].Off+len(got[i].Bytes)] != c.want[i] {
				t.Errorf("%q: document %d = %q at %d, want %q", c.in, i, got[i].Bytes, got[i].Off, c.want[i])
			}
		}
	}
}

func TestBody(t *testing.T) {
	body, l, err := Body([]byte(`{"Resources": [], "ValidateOnly": false}`))
	if err != nil || l != nil || string(body) != `{"Resources": [], "ValidateOnly": false}` {
		t.Errorf("a body: %s, %+v, %v", body, l, err)
	}
	line := `{"kind":"request","api_key":33,"api":"AlterConfigs","version":2,"correlation_id":7,"client_id":null,"header_version":1,` +
		`"header_tags":[{"tag":3,"data":"0102"}],"body":{"ValidateOnly":true}}`
	body, l, err = Body([]byte(line))
	if err != nil || l == nil || string(body) != `{"ValidateOnly":true}` {
		t.Fatalf("a report line: %s, %+v, %v", body, l, err)
	}
	if l.BodyOff != strings.Index(line, `{"ValidateOnly"`) {
		t.Errorf("body at %d, want %d", l.BodyOff, strings.Index(line, `{"ValidateOnly"`))
	}
	// Of two "body" keys encoding/json keeps the last: so does BodyOff.
	two := `{"api_key":3,"body":{"a":1} , "body" :  {"b":2}}`
	if body, l, err := Body([]byte(two)); err != nil || string(body) != `{"b":2}` || l.BodyOff != strings.Index(two, `{"b"`) {
		t.Errorf("two bodies: %s at %d, %v", body, l.BodyOff, err)
	}
	if l.Kind != "request" || l.APIKey != 33 || l.Version != 2 || l.CorrelationID != 7 || l.ClientID != nil ||
		l.HeaderVersion != 1 || len(l.HeaderTags) != 1 || l.HeaderTags[0].Tag != 3 || l.HeaderTags[0].Data != "0102" {
		t.Errorf("report line read as %+v", l)
	}
	if _, _, err := Body([]byte(`{"api_key":3,"body":null}`)); err == nil || !strings.Contains(err.Error(), "no body") {
		t.Errorf("a line of a frame that did not decode: %v", err)
	}
	// A line of a frame that did not decode has no "body" key at all: it
	// is still a report line (no body has an "api_key"), not a body.
	if _, _, err := Body([]byte(`{"kind":"request","api_key":3,"error":"offset 0x0004 (4), x: truncated"}`)); err == nil ||
		err.Error() != "the decode report line has no body (the frame did not decode: offset 0x0004 (4), x: truncated)" {
		t.Errorf("a line without a body: %v", err)
	}
	if _, _, err := Body([]byte(`{"api_key":"three","body":{}}`)); err == nil || !strings.Contains(err.Error(), "report line") {
		t.Errorf("a bad report line: %v", err)
	}
}
