//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testdeadline"
)

// openPty opens a pseudo-terminal pair, or skips the test.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN) // ptsname
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pty's terminal side: %v", err)
	}
	return m, s
}

// heartbeatPcap writes a capture of n Heartbeat exchanges (two data
// packets each) with internal/capture's writer.
func heartbeatPcap(t *testing.T, n int) string {
	t.Helper()
	xs := pcapExchanges()
	hb := xs[2]
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(pcapClient, pcapServer)
	if err := c.Open(pcapT0); err != nil {
		t.Fatal(err)
	}
	at := pcapT0
	req, resp := bytes.Clone(hb.req), bytes.Clone(hb.resp)
	for i := 1; i <= n; i++ {
		// correlation id at 8 in the request, at 4 in the response
		req[8], req[9], req[10], req[11] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		resp[4], resp[5], resp[6], resp[7] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		if err := c.Write(capture.ClientToServer, at, req); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(capture.ServerToClient, at.Add(time.Millisecond), resp); err != nil {
			t.Fatal(err)
		}
		at = at.Add(2 * time.Millisecond)
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hb.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// progressLine matches a drawn progress bar.
var progressLine = regexp.MustCompile(`\r\S*hb\.pcap \[#* *\] +\d+%  \d+/\d+ MB`)

// TestDecodePcapProgressOnTerminal runs `decode --pcap` with stderr on a
// real pseudo-terminal and checks the progress bar is drawn there, and
// not when stderr is a plain file, nor below the size threshold.
func TestDecodePcapProgressOnTerminal(t *testing.T) {
	// The reader reports progress every 16384 packets: 9000 exchanges
	// are 18000 data packets. The threshold is lowered to the file's size
	// (32 MB captures make a slow test); the comparison is >=, so the bar
	// is due.
	path := heartbeatPcap(t, 9000)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The threshold goes in through the environment, as
	// $MANIFESTER_PROGRESS_MIN.
	var progressMin int64

	// run decodes with stderr on f and returns the exit code and stdout.
	run := func(f *os.File) (int, string) {
		var out bytes.Buffer
		env := &Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: f, Getenv: func(k string) string {
			if k == "MANIFESTER_PROGRESS_MIN" {
				return strconv.FormatInt(progressMin, 10)
			}
			return ""
		}}
		code := Main(env, []string{"decode", "--spec", decSpec, "--pcap", path, "--format", "json"})
		return code, out.String()
	}
	// onPty runs decode with stderr on a new pseudo-terminal and returns
	// what the terminal received.
	onPty := func() string {
		master, slave := openPty(t)
		defer master.Close()
		got := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(master) // EIO once the terminal side is closed
			got <- b
		}()
		code, out := run(slave)
		slave.Close()
		if code != 0 {
			t.Fatalf("decode exited %d", code)
		}
		if n := bytes.Count([]byte(out), []byte("\n")); n != 2*9000 {
			t.Errorf("decode printed %d JSON lines, want %d", n, 2*9000)
		}
		select {
		case b := <-got:
			return string(b)
		case <-time.After(testdeadline.Remaining(t)):
			t.Fatal("reading the terminal never ended")
			return ""
		}
	}

	progressMin = st.Size()
	term := onPty()
	if !progressLine.MatchString(term) {
		t.Errorf("no progress bar on the terminal; it received %q", term)
	}
	// The bar's line is cleared before the summary line is printed, so the
	// summary starts a clean line and nothing is left drawn after it.
	last := progressLine.FindAllStringIndex(term, -1)
	if i := strings.Index(term, "manifester decode: "); i < 0 || len(last) == 0 || !strings.HasPrefix(term[last[len(last)-1][1]:], "\r\033[Kmanifester decode: ") {
		t.Errorf("the bar is not cleared before the summary line; the terminal received %q", term)
	}
	if strings.Count(term, "\033[K") != 1 {
		t.Errorf("the bar's line is cleared %d times, want once: %q", strings.Count(term, "\033[K"), term)
	}

	// A plain file as stderr: no bar.
	ef, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if code, _ := run(ef); code != 0 {
		t.Fatalf("decode with stderr on a file exited %d", code)
	}
	b, err := os.ReadFile(ef.Name())
	if err != nil {
		t.Fatal(err)
	}
	if progressLine.Match(b) || bytes.Contains(b, []byte("\r")) {
		t.Errorf("progress output on a plain file: %q", b)
	}

	// A pipe as stderr: no bar.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(pr); got <- b }()
	code, _ := run(pw)
	pw.Close()
	pb := <-got
	pr.Close()
	if code != 0 {
		t.Fatalf("decode with stderr on a pipe exited %d", code)
	}
	if progressLine.Match(pb) || bytes.Contains(pb, []byte("\r")) {
		t.Errorf("progress output on a pipe: %q", pb)
	}

	// On the terminal but one byte under the threshold: no bar.
	progressMin = st.Size() + 1
	if term := onPty(); progressLine.MatchString(term) || bytes.Contains([]byte(term), []byte("\033[K")) {
		t.Errorf("progress bar below the threshold: %q", term)
	}
}
