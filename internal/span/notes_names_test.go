package span

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestErrorNameFollowsKerrButForRenames checks every code's name against
// franz-go's table: the same, except the codes Kafka renamed, which get
// Kafka's name, and NONE and unknown codes.
func TestErrorNameFollowsKerrButForRenames(t *testing.T) {
	known := 0
	for c := -1; c < 1000; c++ {
		code := int16(c)
		got := ErrorName(code)
		want := "unknown error code"
		if e := kerr.TypedErrorForCode(code); code == 0 {
			want = "NONE"
		} else if e != nil && e.Code == code {
			want = e.Message
			known++
		}
		if r, ok := RenamedErrors[code]; ok {
			if r.Old != want {
				t.Errorf("code %d: renamed from %q, but kerr calls it %q", code, r.Old, want)
			}
			want = r.Name
		}
		if got != want {
			t.Errorf("ErrorName(%d) = %q, want %q", code, got, want)
		}
	}
	if known < 100 {
		t.Errorf("kerr knows only %d codes", known)
	}
	if got := ErrorName(6); got != "NOT_LEADER_OR_FOLLOWER" {
		t.Errorf("ErrorName(6) = %q, Kafka's name is NOT_LEADER_OR_FOLLOWER", got)
	}
}
