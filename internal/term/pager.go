package term

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"sync"
)

// DefaultPager is the pager when $PAGER is unset: less that quits when the
// text fits one screen (-F), passes colours through (-R) and leaves the
// text on the screen (-X), as git runs it.
const DefaultPager = "less -FRX"

// PagerCommand is the pager to run: $MANIFESTER_PAGER, else $PAGER, else
// DefaultPager; "cat" means none. getenv may be nil.
func PagerCommand(getenv func(string) string) string {
	cmd := DefaultPager
	if getenv != nil {
		if v := getenv("MANIFESTER_PAGER"); v != "" {
			cmd = v
		} else if v := getenv("PAGER"); v != "" {
			cmd = v
		}
	}
	if f := pagerArgv(cmd, pagerViaShell, isFile); len(f) == 0 || f[0] == "cat" {
		return ""
	}
	return cmd
}

// Pager holds output back until it is taller than the terminal; then it
// starts the pager and streams everything through it. Output that fits
// the screen is written straight to the terminal when the Pager is
// closed, and so is everything when the pager cannot be started. Once the
// pager quits (the user pressed q), the rest of the output is dropped.
type Pager struct {
	out     *os.File // the terminal
	rows    int
	command string

	mu      sync.Mutex
	held    bytes.Buffer
	lines   int
	cmd     *exec.Cmd
	pipe    io.WriteCloser
	direct  bool // the pager could not start: write to out
	quit    bool // the pager exited: drop the rest
	started bool
}

// NewPager returns a Pager for a terminal of rows rows running command
// (see PagerCommand); with command "" or rows < 1 it writes straight
// through.
func NewPager(out *os.File, rows int, command string) *Pager {
	p := &Pager{out: out, rows: rows, command: command}
	if command == "" || rows < 1 {
		p.direct = true
	}
	return p
}

// Write implements io.Writer.
func (p *Pager) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.quit:
		return len(b), nil
	case p.direct:
		return p.out.Write(b)
	case p.started:
		return p.toPager(b)
	}
	p.held.Write(b)
	p.lines += bytes.Count(b, []byte{'\n'})
	if p.lines < p.rows {
		return len(b), nil
	}
	if !p.start() {
		p.direct = true
		_, err := p.out.Write(p.held.Bytes())
		p.held.Reset()
		return len(b), err
	}
	_, err := p.toPager(p.held.Bytes())
	p.held.Reset()
	return len(b), err
}

func (p *Pager) toPager(b []byte) (int, error) {
	if _, err := p.pipe.Write(b); err != nil {
		p.quit = true // the pager is gone; the user has seen enough
	}
	return len(b), nil
}

// start runs the pager with its standard input from a pipe.
func (p *Pager) start() bool {
	f := pagerArgv(p.command, pagerViaShell, isFile)
	if len(f) == 0 {
		return false
	}
	cmd := exec.Command(f[0], f[1:]...)
	cmd.Stdout = p.out
	cmd.Stderr = os.Stderr
	if os.Getenv("LESS") == "" {
		cmd.Env = append(os.Environ(), "LESS=FRX")
	}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return false
	}
	if err := cmd.Start(); err != nil {
		return false
	}
	p.cmd, p.pipe, p.started = cmd, pipe, true
	return true
}

// Close writes what is held (output shorter than the screen) or closes
// the pager's input and waits for the user to quit it.
func (p *Pager) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		if p.held.Len() > 0 {
			_, err := p.out.Write(p.held.Bytes())
			p.held.Reset()
			return err
		}
		return nil
	}
	p.pipe.Close()
	p.cmd.Wait() // the pager's exit status is the user's business
	return nil
}
