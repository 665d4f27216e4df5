package jsonr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/testframes"
)

// TestBodyWithinOutputBudget: a body whose JSON is many times its bytes
// (a string of NUL bytes, each written \u0000) is left out of a line
// whose output budget it would pass, and "output_truncated" says so; the
// line is then the frame's fields and hex (two bytes a frame byte, always
// written) and what the budget allows. Before, the body was written whole
// whatever the budget: a 100 KB frame made a line of 770 KB with a budget
// of 20 KiB.
func TestBodyWithinOutputBudget(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = 3
	r.ClientSoftwareName = strings.Repeat("\x00", 100<<10)
	r.ClientSoftwareVersion = "1"
	b := testframes.Request("c", r, 1)
	const room = 20 << 10
	for _, lean := range []bool{false, true} {
		f := report.Decode(c, b, report.Options{Limits: budget.Limits{Output: room}, Lean: lean})
		if f.Err != nil {
			t.Fatal(f.Err)
		}
		line, err := AppendLine(nil, f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if max := 2*len(b) + room + outputSlack; len(line) > max {
			t.Errorf("lean %v: a frame of %d bytes made a line of %d with an output budget of %d; want at most %d (its hex, the budget and %d)", lean, len(b), len(line), room, max, outputSlack)
		}
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("lean %v: %v", lean, err)
		}
		if _, ok := v["body"]; ok {
			t.Errorf("lean %v: the body is written", lean)
		}
		if s, _ := v["output_truncated"].(string); !strings.Contains(s, "the body") {
			t.Errorf("lean %v: output_truncated = %q; want it to name the body", lean, s)
		}
	}
	// With the default budget the same frame's line has its body.
	f := report.Decode(c, b, report.Options{Lean: true})
	line, err := AppendLine(nil, f, Options{})
	if err != nil || !strings.Contains(string(line), `"body":{"ClientSoftwareName":"\u0000`) {
		t.Errorf("default budget: no body (%v)", err)
	}
}
