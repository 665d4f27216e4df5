// Package annotate adds the notes that make values read as people read
// them to the integer leaves of decoded message bodies: error codes get
// their names (from franz-go's kerr table), API keys their API names,
// millisecond timestamps their UTC dates.
//
// An annotator is wired in through [codec.Codec.Annotate]; uuids are
// already shown in their usual form and unknown tagged fields are flagged
// by the codec itself.
package annotate

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// New returns an annotator that names API keys after the APIs of reg.
func New(reg *schema.Registry) func(*schema.Field, *span.Node) {
	return func(f *schema.Field, n *span.Node) {
		annotate(f, n, func(key int16) string {
			if reg != nil {
				if api, ok := reg.API(key); ok {
					return api.Name
				}
			}
			return ""
		})
	}
}

// Annotate annotates without a registry: API keys are not named.
func Annotate(f *schema.Field, n *span.Node) { annotate(f, n, func(int16) string { return "" }) }

func annotate(f *schema.Field, n *span.Node, apiName func(int16) string) {
	if f == nil || n == nil || n.Val != span.ValInt || n.Note != "" {
		return
	}
	switch {
	case f.Type.Kind == schema.KindInt16 && IsErrorCode(f.Name):
		n.Note = ErrorName(int16(n.Int))
	case f.Type.Kind == schema.KindInt16 && (f.Name == "ApiKey" || f.Name == "RequestApiKey"):
		if name := apiName(int16(n.Int)); name != "" {
			n.Note = name
		} else {
			n.Note = "unknown API"
		}
	case f.Type.Kind == schema.KindInt64 && IsTimestamp(f.Name):
		n.Note = records.TimestampNote(n.Int)
	}
}

// IsErrorCode reports whether a field name holds a Kafka error code
// ("ErrorCode", "PartitionErrorCode", ...).
func IsErrorCode(name string) bool { return strings.HasSuffix(name, "ErrorCode") }

// IsTimestamp reports whether an int64 field name holds a point in time in
// milliseconds ("Timestamp", "ExpiryTimestampMs", "LogAppendTimeMs").
func IsTimestamp(name string) bool {
	return strings.Contains(name, "Timestamp") || strings.HasSuffix(name, "TimeMs") && !strings.Contains(name, "Retention")
}

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
