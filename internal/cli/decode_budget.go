package cli

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/budget"
)

// budgetFlags are decode's flags that raise (or lower) the per-frame
// budget of package budget: --max-inflate, --max-nodes, --max-output.
type budgetFlags struct{ limits budget.Limits }

func (b *budgetFlags) register(fs *flag.FlagSet) {
	fs.Var(sizeFlag{&b.limits.Inflate}, "max-inflate", fmt.Sprintf("most `SIZE` inflated from all compressed batches of one frame, e.g. 1GiB (default %d times the frame plus %s, at most %s)",
		budget.InflatePerByte, budget.Size(budget.InflateBase), budget.Size(budget.InflateMax)))
	fs.Var(countFlag{&b.limits.Nodes}, "max-nodes", fmt.Sprintf("most tree nodes `N` built for one frame's inflated records, and for its own tree (default %d per byte of the frame plus %d, at most %d)",
		budget.NodesPerByte, budget.NodesBase, budget.NodesMax))
	fs.Var(sizeFlag{&b.limits.Output}, "max-output", fmt.Sprintf("most `SIZE` of text or JSON written for one frame (default %d times the frame plus %s, at most %s)",
		budget.OutputPerByte, budget.Size(budget.OutputBase), budget.Size(budget.OutputMax)))
}

// sizeFlag is a byte size with an optional K, M or G suffix.
type sizeFlag struct{ p *int64 }

func (f sizeFlag) String() string {
	if f.p == nil || *f.p == 0 {
		return ""
	}
	return budget.Size(*f.p)
}

func (f sizeFlag) Set(s string) error {
	n, err := budget.ParseSize(s)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("size %q: want more than 0", s)
	}
	*f.p = n
	return nil
}

// countFlag is a positive count.
type countFlag struct{ p *int64 }

func (f countFlag) String() string {
	if f.p == nil || *f.p == 0 {
		return ""
	}
	return strconv.FormatInt(*f.p, 10)
}

func (f countFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q: want a positive number", s)
	}
	*f.p = n
	return nil
}
