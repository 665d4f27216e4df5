package specfetch

import (
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzParseChecksum: whatever a repository serves as a checksum file, the
// digest taken from it is hex of the algorithm's size, or an error that
// shows at most 80 of its bytes (quoted).
func FuzzParseChecksum(f *testing.F) {
	f.Add([]byte("da39a3ee5e6b4b0d3255bfef95601890afd80709  kafka-clients-4.3.0.jar\n"), uint8(0))
	f.Add([]byte("<html>not found</html>"), uint8(1))
	f.Add([]byte(strings.Repeat("ab", 64)), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		algs := []string{"sha1", "sha256", "sha512"}
		sizes := []int{20, 32, 64}
		i := int(which) % len(algs)
		sum, err := parseChecksum(b, algs[i])
		if err != nil {
			if len(err.Error()) > 512 { // 80 bytes, each at most 4 quoted
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if d, derr := hex.DecodeString(sum); derr != nil || len(d) != sizes[i] || sum != strings.ToLower(sum) {
			t.Fatalf("%s digest %q", algs[i], sum)
		}
	})
}

// FuzzParseMetadata: whatever a repository serves as maven-metadata.xml,
// the release taken from it passes CheckVersion (it names a folder of the
// cache), or is an error.
func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte(`<metadata><versioning><latest>4.3.0</latest><release>4.3.0</release></versioning></metadata>`))
	f.Add([]byte(`<metadata><versioning><release>../../etc</release></versioning></metadata>`))
	f.Add([]byte(`<metadata><versioning><latest>4.3.0-rc1</latest></versioning></metadata>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseMetadata(b)
		if err != nil {
			return
		}
		if cerr := CheckVersion(v); cerr != nil {
			t.Fatalf("release %q: %v", v, cerr)
		}
	})
}
