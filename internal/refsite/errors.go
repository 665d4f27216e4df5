package refsite

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/manifester/manifester/internal/span"
)

// ErrorCode is one Kafka error code.
type ErrorCode struct {
	Code        int16
	Name        string
	Retriable   bool
	Description string
	// Formerly is the code's earlier name, for a code Kafka renamed.
	Formerly string
}

// ErrorCodes lists every error code franz-go's kerr table knows, with
// NONE (0), sorted by code, named as the object tree names them
// (span.ErrorName).
func ErrorCodes() []ErrorCode {
	var out []ErrorCode
	for c := int32(math.MinInt16); c <= math.MaxInt16; c++ {
		code := int16(c)
		if code == 0 {
			out = append(out, ErrorCode{Code: 0, Name: "NONE", Description: "No error."})
			continue
		}
		e := kerr.TypedErrorForCode(code)
		if e == nil || e.Code != code {
			continue
		}
		out = append(out, ErrorCode{Code: code, Name: span.ErrorName(code), Retriable: e.Retriable,
			Description: e.Description, Formerly: span.RenamedErrors[code].Old})
	}
	return out
}

// ErrorHref is the link to an error code's entry on the errors page, or ""
// for a code the table does not know.
func ErrorHref(code int16) string {
	if code == 0 {
		return ErrorsPath + "#NONE"
	}
	e := kerr.TypedErrorForCode(code)
	if e == nil || e.Code != code {
		return ""
	}
	return ErrorsPath + "#" + span.ErrorName(code)
}

type errorsPage struct {
	Codes     []ErrorCode
	Retriable int
}

func errorsView() *errorsPage {
	p := &errorsPage{Codes: ErrorCodes()}
	for _, c := range p.Codes {
		if c.Retriable {
			p.Retriable++
		}
	}
	return p
}
