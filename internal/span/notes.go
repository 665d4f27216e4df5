package span

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrorName names a Kafka error code: "NONE" for 0, the code's name from
// franz-go's kerr table, or "unknown error code".
func ErrorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	e := kerr.TypedErrorForCode(code)
	if e == nil || e.Code != code {
		return "unknown error code"
	}
	return e.Message
}

// TimestampNote formats milliseconds since the epoch as a UTC date, for
// values between 2000 and 2100 (others are not dates: -1, 0, durations).
func TimestampNote(ms int64) string {
	const lo, hi = 946684800000, 4102444800000
	if ms < lo || ms > hi {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
