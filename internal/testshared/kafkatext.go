package testshared

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tailscale/hujson"
)

// MinWords is the fewest words a Kafka text must have to count as a
// sentence of Kafka's: shorter ones ("The topic name.") are phrases anyone
// writes, and are what synthetic specs say too.
const MinWords = 5

// kafkaTexts caches KafkaTexts.
var kafkaTexts struct {
	once sync.Once
	list []string
	err  error
}

// KafkaTexts returns every sentence-length text of Kafka's spec files
// under ../shared (kafka-spec and kafka-records, every release): each
// field's "about" and each comment line inside a spec, of at least
// [MinWords] words, deduplicated and sorted longest first. Tests use it to
// keep Kafka's prose out of golden files and every tracked file.
func KafkaTexts(t testing.TB) []string {
	t.Helper()
	dir := Dir(t)
	kafkaTexts.once.Do(func() { kafkaTexts.list, kafkaTexts.err = collect(dir) })
	if kafkaTexts.err != nil {
		t.Fatalf("reading Kafka's specs: %v", kafkaTexts.err)
	}
	return kafkaTexts.list
}

func collect(dir string) ([]string, error) {
	var files []string
	for _, g := range []string{"kafka-spec/*/*.json", "kafka-records/*/*/*.json"} {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	seen := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, s := range texts(src) {
			s = strings.TrimSpace(s)
			if len(strings.Fields(s)) >= MinWords {
				seen[s] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out, nil
}

// texts returns the "about" values and the comment lines inside the
// top-level object of one spec file (the licence header before it is
// Apache's boilerplate, not the spec's prose).
func texts(src []byte) []string {
	var out []string
	open := bytes.IndexByte(src, '{')
	if open < 0 {
		return nil
	}
	for _, line := range strings.Split(string(src[open:]), "\n") {
		if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line[:i], `"`) {
			out = append(out, line[i+2:])
		}
	}
	std, err := hujson.Standardize(bytes.Clone(src))
	if err != nil {
		return out
	}
	var v any
	if json.Unmarshal(std, &v) != nil {
		return out
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "about" {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}
