package e2e

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/testshared"
)

// exchangeLine is what must agree between the proxy's view of a frame and
// `decode --pcap`'s view of the same frame read back from a capture.
type exchangeLine struct {
	Kind          string `json:"kind"`
	APIKey        int16  `json:"api_key"`
	Version       int16  `json:"version"`
	CorrelationID int32  `json:"correlation_id"`
	Src           string `json:"src"`
	Dst           string `json:"dst"`
	Size          int    `json:"size"`
	Offset        int64  `json:"offset"`
	Hex           string `json:"hex"`
	Error         string `json:"error"`
	Roundtrip     *bool  `json:"roundtrip"`
}

// writeProxyCapture writes the client side of every proxied connection
// (client <-> proxy listener), as the proxy saw it, into a capture file.
//
// With mid set, each connection is captured as if the capture started
// in the middle of it: no handshake, and the first request and response
// of every connection only partly there (their first 3 bytes missing).
// Those frames cannot be decoded and are not in want.
func writeProxyCapture(t *testing.T, events []*proxy.Event, f capture.Format, path string, mid ...bool) (want []exchangeLine, packets int) {
	t.Helper()
	cut := len(mid) > 0 && mid[0]
	// The proxy delivers events from its two directions through one
	// decoding queue, so a response can be logged before the request it
	// answers; a capture has them in wire order, which their forwarding
	// times give.
	events = append([]*proxy.Event(nil), events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	firstSeen := map[int]map[string]bool{}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	conns := map[int]*capture.ConnWriter{}
	for _, e := range events {
		if e.Conn == 0 || (e.Kind != proxy.EventFrame && e.Kind != proxy.EventClose) {
			continue
		}
		cw, ok := conns[e.Conn]
		if !ok {
			cw = w.Conn(netip.MustParseAddrPort(e.Client), netip.MustParseAddrPort(e.Listener))
			if !cut {
				if err := cw.Open(e.Time); err != nil {
					t.Fatal(err)
				}
			}
			conns[e.Conn] = cw
			firstSeen[e.Conn] = map[string]bool{}
		}
		if e.Kind == proxy.EventClose {
			if err := cw.Close(e.Time); err != nil {
				t.Fatal(err)
			}
			continue
		}
		dir, src, dst := capture.ClientToServer, e.Client, e.Listener
		if e.Dir == "response" {
			dir, src, dst = capture.ServerToClient, e.Listener, e.Client
		}
		if cut && !firstSeen[e.Conn][e.Dir] {
			firstSeen[e.Conn][e.Dir] = true
			cw.Skip(dir, 3)
			if err := cw.Write(dir, e.Time, e.Data[3:]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := cw.Write(dir, e.Time, e.Data); err != nil {
			t.Fatal(err)
		}
		fr := e.Frame
		want = append(want, exchangeLine{Kind: fr.Kind, APIKey: fr.APIKey, Version: fr.Version, CorrelationID: fr.CorrelationID,
			Src: src, Dst: dst, Size: len(e.Data), Hex: hex.EncodeToString(e.Data), Roundtrip: fr.Roundtrip})
		if !cut {
			want[len(want)-1].Offset = fr.Offset
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return want, w.Packets()
}

// decodePcap runs `manifester decode --pcap` in-process.
func decodePcap(t *testing.T, path string, extra ...string) (stdout, stderr string, code int) {
	t.Helper()
	testshared.Dir(t)
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	args := append([]string{"decode", "--spec", specDir, "--pcap", path}, extra...)
	code = cli.Main(env, args)
	return out.String(), errb.String(), code
}

func parseLines(t *testing.T, out string) []exchangeLine {
	t.Helper()
	var got []exchangeLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l exchangeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("decode --pcap printed a line that is not JSON: %v\n%.300s", err, sc.Text())
		}
		got = append(got, l)
	}
	return got
}

func sortLines(ls []exchangeLine) {
	slices.SortStableFunc(ls, func(a, b exchangeLine) int {
		return strings.Compare(a.Src+a.Dst+a.Kind+a.Hex, b.Src+b.Dst+b.Kind+b.Hex)
	})
}

// requireTool finds a peer tool: missing is a skip locally, a failure in CI.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI (.ci/run installs it): %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// checkCaptureOfProxy writes the proxied traffic as pcap and pcapng, reads
// each back with decode --pcap and with tshark.
func checkCaptureOfProxy(t *testing.T, events []*proxy.Event) {
	dir := t.TempDir()
	for _, f := range []struct {
		name string
		fmt  capture.Format
		mid  bool
	}{{"proxy.pcap", capture.PCAP, false}, {"proxy.pcapng", capture.PCAPNG, false}, {"mid-connection.pcap", capture.PCAP, true}} {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(dir, f.name)
			want, packets := writeProxyCapture(t, events, f.fmt, path, f.mid)
			if len(want) < 50 {
				t.Fatalf("only %d frames to write", len(want))
			}
			out, errOut, code := decodePcap(t, path, "--format", "json", "--roundtrip")
			if code != 0 {
				t.Errorf("decode --pcap exited %d: %s", code, errOut)
			}
			got := parseLines(t, out)
			if f.mid { // stream offsets count from the first byte captured
				for i := range got {
					got[i].Offset = 0
				}
			}
			for _, l := range got {
				if l.Error != "" || l.Roundtrip == nil || !*l.Roundtrip {
					t.Errorf("%s %d v%d corr %d: error %q roundtrip %v", l.Kind, l.APIKey, l.Version, l.CorrelationID, l.Error, l.Roundtrip)
				}
			}
			sortLines(want)
			sortLines(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decode --pcap disagrees with the proxy (-proxy +pcap):\n%.3000s", diff)
			}

			tshark := requireTool(t, "tshark")
			cmd := exec.Command(tshark, "-n", "-r", path, "-T", "fields", "-e", "frame.number")
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Run(); err != nil {
				t.Fatalf("tshark -r %s: %v\n%s", f.name, err, se.String())
			}
			if n := strings.Count(so.String(), "\n"); n != packets {
				t.Errorf("tshark read %d packets, we wrote %d (stderr: %s)", n, packets, se.String())
			}
			for _, line := range strings.Split(strings.TrimSpace(se.String()), "\n") {
				if line != "" && !strings.Contains(line, "Running as user") {
					t.Errorf("tshark complained: %s", line)
				}
			}
			if !f.mid {
				checkTsharkKafka(t, tshark, path, got)
			}
		})
	}
}

// checkTsharkKafka has Wireshark's Kafka dissector, an independent
// implementation, read the capture: every frame it finds must be one of
// ours, with the same direction, API key, version, correlation id and
// length, and it must find them all.
func checkTsharkKafka(t *testing.T, tshark, path string, ours []exchangeLine) {
	t.Helper()
	ports := map[string]bool{}
	var want []string
	for _, l := range ours {
		sp, dp := l.Src[strings.LastIndex(l.Src, ":")+1:], l.Dst[strings.LastIndex(l.Dst, ":")+1:]
		if l.Kind == "request" {
			ports[dp] = true
			want = append(want, fmt.Sprintf("%s request %d v%d corr %d len %d", sp, l.APIKey, l.Version, l.CorrelationID, l.Size-4))
		} else {
			want = append(want, fmt.Sprintf("%s response corr %d len %d", sp, l.CorrelationID, l.Size-4))
		}
	}
	var pl []string
	for p := range ports {
		pl = append(pl, p)
	}
	cmd := exec.Command(tshark, "-n", "-r", path, "-o", "kafka.tcp.ports:"+strings.Join(pl, ","),
		"-T", "fields", "-E", "separator=/t", "-e", "tcp.srcport", "-e", "kafka.request_key", "-e", "kafka.api_version",
		"-e", "kafka.correlation_id", "-e", "kafka.len")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark kafka fields: %v\n%s", err, se.String())
	}
	var got []string
	for _, line := range strings.Split(so.String(), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[3] == "" {
			continue
		}
		keys, vers, corrs, lens := split(f[1]), split(f[2]), split(f[3]), split(f[4])
		for i := range corrs {
			if len(keys) > 0 {
				if i >= len(keys) || i >= len(vers) || i >= len(lens) {
					t.Fatalf("tshark fields do not line up: %q", line)
				}
				got = append(got, fmt.Sprintf("%s request %s v%s corr %s len %s", f[0], keys[i], vers[i], corrs[i], lens[i]))
			} else {
				got = append(got, fmt.Sprintf("%s response corr %s len %s", f[0], corrs[i], lens[i]))
			}
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Wireshark's Kafka dissector sees other frames than decode --pcap (-ours +tshark):\n%.3000s", diff)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
