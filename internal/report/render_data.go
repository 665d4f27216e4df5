package report

import "github.com/manifester/manifester/internal/budget"

// RenderBudget is a fresh output budget for one rendering of the frame:
// each rendering may write up to the output limit of the budget the frame
// was decoded under (or of the default budget for its size).
func (f *Frame) RenderBudget() *budget.Budget { return f.renderBudget() }

// OutputSpent is the sentence that says the output budget b cut a
// rendering, what naming what was left out.
func OutputSpent(b *budget.Budget, what string) string { return outputSpent(b, what) }
