package specfind

import "testing"

// FuzzCompareVersions: CompareVersions orders any strings (version folder
// names come from the Maven and Gradle caches) as a total preorder:
// reflexive, antisymmetric and transitive, so that Newest and the
// newest-first sort do not depend on the order things were found in.
func FuzzCompareVersions(f *testing.F) {
	f.Add("4.3.0", "4.3", "4.10.0-rc1")
	f.Add("4.3.0-SNAPSHOT", "x", "")
	f.Add("99999999999999999999.0", "-1", "4..3")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if got := CompareVersions(a, a); got != 0 {
			t.Fatalf("CompareVersions(%q, itself) = %d", a, got)
		}
		ab, ba := CompareVersions(a, b), CompareVersions(b, a)
		if ab != -ba || ab < -1 || ab > 1 {
			t.Fatalf("CompareVersions(%q, %q) = %d, reversed %d", a, b, ab, ba)
		}
		bc, ac := CompareVersions(b, c), CompareVersions(a, c)
		if ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("%q <= %q <= %q but %q > %q", a, b, c, a, c)
		}
		if ab == 0 && bc == 0 && ac != 0 {
			t.Fatalf("%q = %q = %q but %q != %q", a, b, c, a, c)
		}
	})
}
