package span

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrorName names a Kafka error code: "NONE" for 0, the code's name from
// franz-go's kerr table (Kafka's current name where kerr keeps an older
// one, see [RenamedErrors]), or "unknown error code".
func ErrorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if r, ok := RenamedErrors[code]; ok {
		return r.Name
	}
	e := kerr.TypedErrorForCode(code)
	if e == nil || e.Code != code {
		return "unknown error code"
	}
	return e.Message
}

// Renamed is an error code whose name Kafka changed after kerr took it.
type Renamed struct {
	// Name is Kafka's name; Old is the earlier one, kerr's.
	Name, Old string
}

// RenamedErrors are the codes whose kerr name is not Kafka's current one:
// only 6, renamed in Kafka 2.6 when, with fetches from followers, it came
// to mean "not a replica" as well as "not the leader".
var RenamedErrors = map[int16]Renamed{6: {Name: "NOT_LEADER_OR_FOLLOWER", Old: "NOT_LEADER_FOR_PARTITION"}}

// TimestampNote formats milliseconds since the epoch as a UTC date, for
// values between 2000 and 2100 (others are not dates: -1, 0, durations).
func TimestampNote(ms int64) string {
	const lo, hi = 946684800000, 4102444800000
	if ms < lo || ms > hi {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
