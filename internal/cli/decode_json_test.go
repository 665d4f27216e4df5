package cli

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDecodeJSONAbout checks that decode --format json lines carry no
// field descriptions unless --about is given, and that both forms hold the
// same tree otherwise (names, paths, values, offsets of every node).
func TestDecodeJSONAbout(t *testing.T) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	tp := kmsg.NewCreateTopicsRequestTopic()
	tp.Topic, tp.NumPartitions, tp.ReplicationFactor = "orders", 3, 1
	req.Topics = append(req.Topics, tp)
	in := hex.EncodeToString(kmsg.NewRequestFormatter(kmsg.FormatterClientID("kgo")).AppendRequest(nil, req, 5))

	type node struct {
		Name, Path, Text, About string
		Value                   any // typed
		Offset, Size            int
		Children                []*node
	}
	type line struct {
		API  string
		Body map[string]any
		Tree *node
	}
	read := func(args ...string) (line, int) {
		t.Helper()
		out, errs, code := runCLI(t, append([]string{"decode", "--spec", spec43, "--format", "json", "--hex", in}, args...)...)
		if code != ExitOK || strings.Count(out, "\n") != 1 {
			t.Fatalf("decode %v exited %d (%s), %d lines", args, code, errs, strings.Count(out, "\n"))
		}
		var l line
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatal(err)
		}
		abouts := 0
		var walk func(n *node)
		walk = func(n *node) {
			if n.About != "" {
				abouts++
			}
			for _, k := range n.Children {
				walk(k)
			}
		}
		walk(l.Tree)
		return l, abouts
	}
	plain, n := read()
	if n != 0 {
		t.Errorf("%d descriptions without --about", n)
	}
	with, n := read("--about")
	if n < 10 {
		t.Errorf("only %d descriptions with --about", n)
	}
	if plain.API != "CreateTopics" || plain.Body["Topics"].([]any)[0].(map[string]any)["Name"] != "orders" {
		t.Errorf("line: %+v", plain)
	}
	var strip func(n *node)
	strip = func(n *node) {
		n.About = ""
		for _, k := range n.Children {
			strip(k)
		}
	}
	strip(with.Tree)
	a, _ := json.Marshal(plain.Tree)
	b, _ := json.Marshal(with.Tree)
	if string(a) != string(b) {
		t.Errorf("trees differ beyond descriptions:\n%s\n%s", a, b)
	}
}
