package term

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress draws a progress bar, "name [#####     ]  45%  90/200 MB", on
// one line of a terminal, redrawn at most every 200 ms.
type Progress struct {
	W     io.Writer
	Name  string
	Total int64 // bytes; the bar is full at Total
	// Now is the clock (nil: time.Now).
	Now  func() time.Time
	last time.Time
}

// progressEvery is the shortest time between two drawings.
const progressEvery = 200 * time.Millisecond

// Update draws the bar for read bytes of Total, unless it was drawn less
// than 200 ms ago.
func (p *Progress) Update(read int64) {
	now := time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	if !p.last.IsZero() && now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	frac := 1.0
	if p.Total > 0 {
		frac = float64(read) / float64(p.Total)
	}
	frac = min(max(frac, 0), 1)
	const width = 30
	n := int(frac * width)
	fmt.Fprintf(p.W, "\r%s [%s%s] %3.0f%%  %d/%d MB", p.Name, strings.Repeat("#", n), strings.Repeat(" ", width-n), frac*100, read>>20, p.Total>>20)
}

// Done clears the bar's line, once, if the bar was drawn.
func (p *Progress) Done() {
	if !p.last.IsZero() {
		fmt.Fprint(p.W, "\r\033[K")
		p.last = time.Time{}
	}
}
