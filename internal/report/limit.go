package report

import (
	"fmt"
	"strings"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/english"
)

// budgetNote is the Budget text of a frame: the limits reached while it
// was decoded (the messages after the first before of the budget's) and
// how many compressed areas were left compressed.
func budgetNote(b *budget.Budget, before, notInflatedBefore int) string {
	msgs := b.Spent()
	if len(msgs) <= before && b.NotInflated == notInflatedBefore {
		return ""
	}
	parts := append([]string(nil), msgs[min(before, len(msgs)):]...)
	if n := b.NotInflated - notInflatedBefore; n > 0 {
		parts = append(parts, english.Count(n, "compressed area")+" of this frame shown compressed, not inflated")
	}
	return strings.Join(parts, "; ")
}

// outputBudget returns the budget that bounds the rendering of f: the one
// it was decoded under, or the default for its size.
func (f *Frame) outputBudget() *budget.Budget {
	if f.bud == nil {
		f.bud = budget.Limits{}.For(nil, len(f.Bytes))
	}
	return f.bud
}

// renderBudget is a fresh output budget for one rendering of f: each
// text (package render/text) or JSON (package render/jsonr) rendering of a
// frame may write up to its output limit.
func (f *Frame) renderBudget() *budget.Budget {
	f.rendered = &budget.Budget{MaxOutput: f.outputBudget().MaxOutput}
	return f.rendered
}

// outputSpent is the line that says the output budget cut the rendering;
// b records it (see OutputCut).
func outputSpent(b *budget.Budget, what string) string {
	msg := fmt.Sprintf("output budget of %s for this frame spent: %s not shown (raise it with --max-output)", budget.Size(b.MaxOutput), what)
	b.Spend("%s", msg)
	return msg
}

// OutputCut says what the latest rendering of f (text or JSON) left out
// because of its output budget: "" when nothing, or when f was not
// rendered. The commands count such frames with those that reached their
// decode budget.
func (f *Frame) OutputCut() string {
	if f.rendered == nil {
		return ""
	}
	return strings.Join(f.rendered.Spent(), "; ")
}

// BudgetNotes is what f's decode budget (Budget) and its latest
// rendering's output budget (OutputCut) held back: "" when nothing.
func (f *Frame) BudgetNotes() string {
	switch cut := f.OutputCut(); {
	case cut == "":
		return f.Budget
	case f.Budget == "":
		return cut
	default:
		return f.Budget + "; " + cut
	}
}
