package cli

import (
	"github.com/manifester/manifester/internal/filter"
	"github.com/manifester/manifester/internal/schema"
)

// compileFilter compiles a --filter expression against the release's API
// names; the error names the column.
func compileFilter(expr string, reg *schema.Registry) (*filter.Filter, error) {
	if expr == "" {
		return nil, nil
	}
	f, err := filter.Compile(expr, func(name string) (int16, error) {
		api, err := reg.Lookup(name)
		if err != nil {
			return 0, err
		}
		return api.Key, nil
	})
	if err != nil {
		return nil, usagef("--filter: %v", err)
	}
	return f, nil
}
