package cli

import (
	annotatepkg "github.com/manifester/manifester/internal/annotate"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// annotate adds human notes to the integer leaves of message bodies that
// hold something other than zero: error-code names and timestamps as
// dates. Zero values stay bare, so the reference pages of smallest
// instances (all zero) read as before. decode replaces it with
// annotatepkg.New(reg), which notes every value and names API keys.
func annotate(f *schema.Field, n *span.Node) {
	if n == nil || n.Int == 0 {
		return
	}
	annotatepkg.Annotate(f, n)
}
