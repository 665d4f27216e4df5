package report

import "github.com/manifester/manifester/internal/budget"

// RenderBudget returns a fresh output budget for one rendering of f (the
// output limit of the budget f was decoded under, or of the default for
// its size): each rendering of a frame may write up to that limit.
func (f *Frame) RenderBudget() *budget.Budget { return f.renderBudget() }

// OutputSpent is the line a renderer writes where the output budget b cut
// its rendering of a frame short; what says what was not shown.
func OutputSpent(b *budget.Budget, what string) string { return outputSpent(b, what) }
