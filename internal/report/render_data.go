package report

import "github.com/manifester/manifester/internal/budget"

// Lean reports whether the frame was decoded with Options.Lean: Hex and
// Body were left empty, for renderers to make from Bytes and from
// Decoded.Body when they write the frame.
func (f *Frame) Lean() bool { return f.lean }

// BodyPending reports whether the frame's body is to be made from
// Decoded.Body (a lean frame that decoded cleanly) rather than read from
// Body.
func (f *Frame) BodyPending() bool { return f.leanBody && len(f.Body) == 0 && f.Decoded != nil }

// RenderBudget is a fresh output budget for one rendering of the frame:
// each rendering may write up to the output limit of the budget the frame
// was decoded under (or of the default budget for its size).
func (f *Frame) RenderBudget() *budget.Budget { return f.renderBudget() }

// OutputSpent is the sentence that says the output budget b cut a
// rendering, what naming what was left out.
func OutputSpent(b *budget.Budget, what string) string { return outputSpent(b, what) }
