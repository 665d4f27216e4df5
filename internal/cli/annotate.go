package cli

import (
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// annotate adds human notes to integer leaves of message bodies.
func annotate(f *schema.Field, n *span.Node) {}
