package testshared

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// StandIn is what golden files show instead of a text of Kafka's: the
// text's identity (a hash), not its words, so a golden still changes when
// the description attached to a field changes.
func StandIn(kind, text string) string {
	if text == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(text))
	return kind + "#" + hex.EncodeToString(sum[:4])
}

// ScrubbedSpec writes the spec files of one release of ../shared to a
// temporary directory with their prose removed: every "about" replaced by
// its [StandIn] and every comment dropped. Structure, names, types,
// versions and defaults are kept, so what is encoded and decoded from the
// copy is byte for byte what Kafka's files give, and golden files made
// from it carry no Kafka sentence. The copy is t.TempDir()/<release>.
func ScrubbedSpec(t testing.TB, release string) string {
	t.Helper()
	src := Spec(t, release)
	files, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no spec files in %s: %v", src, err)
	}
	dir := filepath.Join(t.TempDir(), release) // named as the release, for its label
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := scrub(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// PROVENANCE names the release (the source's label); it is one line
	// of where the files came from, no spec text.
	if b, err := os.ReadFile(filepath.Join(src, "PROVENANCE")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "PROVENANCE"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scrub rewrites one spec file as standard JSON without comments and
// with stand-ins for the abouts.
func scrub(src []byte) ([]byte, error) {
	std, err := hujson.Standardize(bytes.Clone(src))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber() // keep int64 defaults exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "about" {
					v[k] = StandIn("about", s)
					continue
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
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("re-encoding: %w", err)
	}
	return append(out, '\n'), nil
}

// ContainsKafkaText returns the first of Kafka's sentences ([KafkaTexts])
// found in b, or "".
func ContainsKafkaText(t testing.TB, b []byte) string {
	t.Helper()
	s := string(b)
	for _, k := range KafkaTexts(t) {
		if strings.Contains(s, k) {
			return k
		}
	}
	return ""
}
