// Command proxybench measures what `manifester proxy` costs a Kafka client:
// a franz-go producer and consumer move the same records once directly to
// an in-process kfake broker and once through the proxy, and the program
// prints throughput and produce-latency percentiles of both runs.
//
//	go run ./bench/proxybench -manifester ./manifester -records 20000
//
// The modes run alternately -rounds times each (fresh topics every run,
// each deleted after its run so that the broker's memory stays that of
// one run) and the median of each figure is printed, one line per mode:
//
//	direct mbps=… p50_ms=… p99_ms=… p50s_ms=… p99s_ms=… produced=N consumed=N runs=3
//	relay mbps=… p50_ms=… p99_ms=… p50s_ms=… p99s_ms=… produced=N consumed=N runs=3 cpu_ms_per_mb=… children_cpu_ms_per_mb=0.00
//	proxy mbps=… p50_ms=… p99_ms=… p50s_ms=… p99s_ms=… produced=N consumed=N runs=3 cpu_ms_per_mb=… children_cpu_ms_per_mb=…
//
// A last line gives the median, lowest and highest of the ratios of each
// round's runs, which ran one after the other:
//
//	ratios proxy_vs_direct=… (lo…hi) proxy_vs_relay=… (lo…hi) relay_vs_direct=… (lo…hi)
//
// The direct run's own throughput moves by a third between runs on a
// shared machine, mostly with how the client happens to batch; runs a
// few seconds apart meet the same load, so the ratio within a round
// moves less than the ratio of the modes' medians, and it is what
// bench/run reports.
//
// The relay and proxy lines also give the CPU time their process spent
// per MB of record values moved (read from /proc before and after each
// run, the median of the runs): its own threads' (forwarding) and its
// children's (the proxy's decoding process). Unlike the throughput,
// which follows how the client batches, these hold from run to run.
//
// The relay is the floor any proxy stands on: this program run again as
// a second process that copies bytes both ways (io.Copy, no framing, no
// decoding) in front of a second kfake broker, which advertises the
// relay's address so that every connection of the client goes through
// it. What the proxy adds beyond the relay is its own cost; what the
// relay adds is the machine's (two more hops through the kernel and a
// second process to wake, on the same cores).
//
// Throughput counts record values (1 KiB each) from the first produce to
// the last record consumed. Latency is measured afterwards on records
// produced one at a time (ProduceSync), from Produce to the acknowledgement,
// so it is the round trip and not queueing, twice: right after the burst
// (p50_ms, p99_ms), while the proxy may still be decoding what the burst
// sent it, and again once the process in front of the broker (the proxy,
// the relay) has gone idle (p50s_ms, p99s_ms: settled; no CPU time for
// 200 ms in a row, read from /proc, at most 60 s of waiting). A run fails
// unless every record produced is consumed, each exactly once.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// verbose logs every run's throughput.
var verbose = flag.Bool("v", false, "log each run's throughput")

func main() {
	bin := flag.String("manifester", "", "manifester binary; without it only the direct run happens")
	n := flag.Int("records", 20000, "records to produce and consume per run")
	size := flag.Int("size", 1024, "bytes per record value")
	listen := flag.String("listen", "127.0.0.1:19092", "address for the proxy to listen on")
	rounds := flag.Int("rounds", 3, "runs of each mode, alternating; the median is reported")
	specDir := flag.String("spec", "../shared/kafka-spec/4.3", "spec the proxy decodes with")
	relayListen := flag.String("relay", "127.0.0.1:19094", "address for the relay to listen on (empty: no relay run)")
	relayUpstream := flag.String("relay-upstream", "", "run as the relay: copy between -relay and this address (internal)")
	flag.Parse()
	if *relayUpstream != "" {
		log.Fatal(relay(*relayListen, *relayUpstream))
	}
	var topics []string
	for r := 0; r < *rounds; r++ {
		topics = append(topics, fmt.Sprintf("direct-%d", r), fmt.Sprintf("proxied-%d", r))
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topics...))
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	upstream := cluster.ListenAddrs()[0]
	direct, relayed, proxied := &results{}, &results{}, &results{}
	if *bin == "" {
		for r := 0; r < *rounds; r++ {
			if err := direct.run(upstream, fmt.Sprintf("direct-%d", r), *n, *size); err != nil {
				log.Fatal(err)
			}
		}
		direct.print("direct")
		return
	}
	cmd := exec.Command(*bin, "proxy", "--spec", *specDir, "--listen", *listen, "--upstream", upstream, "--format", "summary", "--log", os.DevNull)
	// The summary lines come through a pipe of our own: cmd.Wait would
	// close a StdoutPipe while its last lines are still being read.
	out, w, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	w.Close()
	lc := countLog(out)
	stopped := false
	defer func() {
		if !stopped {
			stopProxy(cmd)
		}
	}()
	proxied.pid = cmd.Process.Pid
	if err := waitListening(*listen, 10*time.Second); err != nil {
		log.Fatal(err)
	}
	var relayCmd *exec.Cmd
	if *relayListen != "" {
		var behind *kfake.Cluster
		relayCmd, behind, err = startRelay(*relayListen, *rounds)
		if err != nil {
			log.Print(err)
			_ = cmd.Process.Kill()
			os.Exit(1)
		}
		defer behind.Close()
		defer stopProxy(relayCmd)
		relayed.pid = relayCmd.Process.Pid
	}
	for r := 0; r < *rounds; r++ {
		if err := direct.run(upstream, fmt.Sprintf("direct-%d", r), *n, *size); err != nil {
			log.Print(err)
			_ = cmd.Process.Kill()
			os.Exit(1)
		}
		if relayCmd != nil {
			if err := relayed.run(*relayListen, fmt.Sprintf("relayed-%d", r), *n, *size); err != nil {
				log.Print(err)
				_ = cmd.Process.Kill()
				_ = relayCmd.Process.Kill()
				os.Exit(1)
			}
		}
		if err := proxied.run(*listen, fmt.Sprintf("proxied-%d", r), *n, *size); err != nil {
			log.Print(err)
			_ = cmd.Process.Kill()
			os.Exit(1)
		}
	}
	direct.print("direct")
	if relayCmd != nil {
		relayed.print("relay")
	}
	proxied.print("proxy")
	printRatios(direct, relayed, proxied)
	// What the proxy logged: every frame decoded or counted as skipped
	// (its decoding is best effort, behind forwarding).
	stopped = true
	stopProxy(cmd)
	<-lc.done
	fmt.Printf("proxy_log frames=%d skipped=%d\n", lc.frames, lc.skipped)
}

// startRelay starts a second kfake broker that advertises relayAddr, with
// a topic for each of the rounds, and this program again as the relay
// from relayAddr to it.
func startRelay(relayAddr string, rounds int) (*exec.Cmd, *kfake.Cluster, error) {
	var topics []string
	for r := 0; r < rounds; r++ {
		topics = append(topics, fmt.Sprintf("relayed-%d", r))
	}
	var real string // the broker's own address (ListenAddrs gives the advertised one)
	behind, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topics...),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			ln, err := net.Listen(network, "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			real = ln.Addr().String()
			return advertised{ln, relayAddr}, nil
		}))
	if err != nil {
		return nil, nil, err
	}
	if real == "" || real == relayAddr {
		behind.Close()
		return nil, nil, fmt.Errorf("relay: the broker behind it listens on %q", real)
	}
	self, err := os.Executable()
	if err != nil {
		behind.Close()
		return nil, nil, err
	}
	cmd := exec.Command(self, "-relay", relayAddr, "-relay-upstream", real)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		behind.Close()
		return nil, nil, err
	}
	if err := waitListening(relayAddr, 10*time.Second); err != nil {
		_ = cmd.Process.Kill()
		behind.Close()
		return nil, nil, err
	}
	return cmd, behind, nil
}

// advertised is a listener that gives another address as its own: the
// relay's, which kfake then advertises to clients.
type advertised struct {
	net.Listener
	addr string
}

func (a advertised) Addr() net.Addr {
	addr, err := net.ResolveTCPAddr("tcp", a.addr)
	if err != nil {
		return a.Listener.Addr()
	}
	return addr
}

// relay copies bytes both ways between every client of listen and a
// connection of its own to upstream, until it is interrupted.
func relay(listen, upstream string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() { _, _ = io.Copy(u, c); u.(*net.TCPConn).CloseWrite(); close(done) }()
			_, _ = io.Copy(c, u)
			<-done
		}()
	}
}

// results collects the runs of one mode.
type results struct {
	mbps, p50, p99 []float64
	p50s, p99s     []float64 // settled
	// cpu is the CPU time, in ms per MB of record values, that the
	// process in front of the broker spent in a run (its own threads,
	// not its children's: forwarding, not decoding); kids is its
	// children's (the decoding process).
	cpu, kids          []float64
	produced, consumed int
	// pid is the process in front of the broker (0: none), whose going
	// idle the settled latency waits for.
	pid int
}

func (res *results) run(seed, topic string, n, size int) error {
	own0, kids0 := res.cpuTimes()
	mbps, lat, settled, produced, consumed, err := runOnce(seed, topic, n, size, func() error { return waitIdle(res.pid) })
	if err != nil {
		return fmt.Errorf("%s: %w", topic, err)
	}
	if res.pid != 0 {
		own1, kids1 := res.cpuTimes()
		mb := float64(n*size) / 1e6
		res.cpu = append(res.cpu, float64(own1-own0)*1000/clockTicks/mb)
		res.kids = append(res.kids, float64(kids1-kids0)*1000/clockTicks/mb)
	}
	pct := func(lat []time.Duration, p float64) float64 {
		slices.Sort(lat)
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	res.mbps = append(res.mbps, mbps)
	if *verbose {
		log.Printf("%s: %.1f MB/s", topic, mbps)
	}
	res.p50 = append(res.p50, pct(lat, 0.50))
	res.p99 = append(res.p99, pct(lat, 0.99))
	res.p50s = append(res.p50s, pct(settled, 0.50))
	res.p99s = append(res.p99s, pct(settled, 0.99))
	res.produced += produced
	res.consumed += consumed
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// printRatios prints the median, lowest and highest of each round's
// throughput ratios (the runs of one round are adjacent in time).
func printRatios(direct, relayed, proxied *results) {
	line := "ratios"
	add := func(name string, a, b *results) {
		if len(a.mbps) == 0 || len(a.mbps) != len(b.mbps) {
			return
		}
		r := make([]float64, len(a.mbps))
		for i := range r {
			r[i] = a.mbps[i] / b.mbps[i]
		}
		line += fmt.Sprintf(" %s=%.3f (%.3f…%.3f)", name, median(r), slices.Min(r), slices.Max(r))
	}
	add("proxy_vs_direct", proxied, direct)
	add("proxy_vs_relay", proxied, relayed)
	add("relay_vs_direct", relayed, direct)
	fmt.Println(line)
}

func (res *results) print(name string) {
	cpu := ""
	if len(res.cpu) > 0 {
		cpu = fmt.Sprintf(" cpu_ms_per_mb=%.2f children_cpu_ms_per_mb=%.2f", median(res.cpu), median(res.kids))
	}
	fmt.Printf("%s mbps=%.2f p50_ms=%.3f p99_ms=%.3f p50s_ms=%.3f p99s_ms=%.3f produced=%d consumed=%d runs=%d%s\n",
		name, median(res.mbps), median(res.p50), median(res.p99), median(res.p50s), median(res.p99s), res.produced, res.consumed, len(res.mbps), cpu)
}

// clockTicks is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// cpuTimes returns the CPU time process res.pid has used, and that of
// its children now running, in clock ticks (0, 0 without a process or
// on a system with no /proc).
func (res *results) cpuTimes() (own, kids int64) {
	if res.pid == 0 {
		return 0, 0
	}
	own, _ = cpuTime(res.pid)
	for _, c := range children(res.pid) {
		t, _ := cpuTime(c)
		kids += t
	}
	return own, kids
}

// children lists the processes pid started that are running.
func children(pid int) []int {
	var out []int
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, k := range files {
		b, _ := os.ReadFile(k)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// stopProxy stops the proxy as Ctrl-C does (so that it flushes what it
// writes), and kills it if it has not ended within 10 seconds.
func stopProxy(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func waitListening(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("proxy did not listen on %s within %v", addr, d)
}

// latencyRecords are produced one at a time after the throughput run.
const latencyRecords = 1000

func runOnce(seed, topic string, n, size int, settle func() error) (mbps float64, lat, settled []time.Duration, produced, consumed int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		return 0, nil, nil, 0, 0, err
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, nil, nil, 0, 0, err
	}
	defer cons.Close()

	total := n + 2*latencyRecords
	seen := make([]bool, total)
	consumeErr := make(chan error, 1)
	start := time.Now()
	var last time.Time
	go func() {
		for consumed < total {
			fs := cons.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				consumeErr <- err
				return
			}
			var dup error
			fs.EachRecord(func(r *kgo.Record) {
				i, err := strconv.Atoi(string(r.Key))
				if err != nil || i < 0 || i >= total || seen[i] {
					dup = fmt.Errorf("unexpected or duplicate record key %q", r.Key)
					return
				}
				seen[i] = true
				consumed++
				if consumed == n {
					last = time.Now()
				}
			})
			if dup != nil {
				consumeErr <- dup
				return
			}
		}
		consumeErr <- nil
	}()

	value := make([]byte, size)
	for i := range value {
		value[i] = byte(i * 7)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var prodErr error
	for i := 0; i < n; i++ {
		wg.Add(1)
		prod.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				prodErr = errors.Join(prodErr, err)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if prodErr != nil {
		return 0, nil, nil, 0, 0, prodErr
	}
	produced = n
	// Latency: one record at a time, so that it measures the round trip
	// and not the queue behind a burst; first right after the burst, then
	// once the process in front of the broker has settled.
	one := func(i int) (time.Duration, error) {
		t0 := time.Now()
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}).FirstErr(); err != nil {
			return 0, err
		}
		produced++
		return time.Since(t0), nil
	}
	for i := n; i < n+latencyRecords; i++ {
		d, err := one(i)
		if err != nil {
			return 0, nil, nil, produced, 0, err // consumed is the consumer goroutine's until it reports
		}
		lat = append(lat, d)
	}
	if err := settle(); err != nil {
		return 0, nil, nil, produced, 0, err // consumed is the consumer goroutine's until it reports
	}
	for i := n + latencyRecords; i < total; i++ {
		d, err := one(i)
		if err != nil {
			return 0, nil, nil, produced, 0, err // consumed is the consumer goroutine's until it reports
		}
		settled = append(settled, d)
	}
	if err := <-consumeErr; err != nil {
		return 0, nil, nil, produced, consumed, err
	}
	mbps = float64(n*size) / last.Sub(start).Seconds() / 1e6
	// The broker keeps every record in memory: the topic goes once read.
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = 10000
	t := kmsg.NewDeleteTopicsRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	del.Topics = append(del.Topics, t)
	del.TopicNames = append(del.TopicNames, topic)
	resp, err := del.RequestWith(ctx, prod)
	if err == nil && len(resp.Topics) == 1 {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		return 0, nil, nil, produced, consumed, fmt.Errorf("deleting topic %s: %w", topic, err)
	}
	return mbps, lat, settled, produced, consumed, nil
}

// waitIdle waits until process pid and its children (the proxy's
// decoding process) have used no CPU time for 200 ms in a row (their
// utime and stime in /proc/PID/stat), at most a minute; pid 0 (no
// process: the direct run) waits the same 200 ms once.
func waitIdle(pid int) error {
	const step = 200 * time.Millisecond
	if pid == 0 {
		time.Sleep(step)
		return nil
	}
	cpu := func() (int64, error) {
		// The proxy and its children (the decoding process).
		pids := append([]int{pid}, children(pid)...)
		var sum int64
		for i, p := range pids {
			t, err := cpuTime(p)
			if err != nil && i == 0 {
				return 0, err
			}
			sum += t // a child that ended counts nothing more
		}
		return sum, nil
	}
	prev, err := cpu()
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		time.Sleep(step)
		cur, err := cpu()
		if err != nil {
			return err
		}
		if cur == prev {
			return nil
		}
		prev = cur
	}
	return fmt.Errorf("process %d did not go idle within a minute", pid)
}

// cpuTime is the CPU time process pid has used, in clock ticks.
func cpuTime(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	return u + st, errors.Join(err1, err2)
}

// logCount counts the proxy's summary lines: frames decoded, and frames
// skipped as its "# ... skipped" lines report them.
type logCount struct {
	frames, skipped int
	done            chan struct{}
}

var skippedRe = regexp.MustCompile(`(\d+) frames forwarded without decoding`)

func countLog(r io.Reader) *logCount {
	lc := &logCount{done: make(chan struct{})}
	go func() {
		defer close(lc.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "# ") {
				lc.frames++
			} else if m := skippedRe.FindStringSubmatch(line); m != nil && strings.Contains(line, " skipped ") {
				n, _ := strconv.Atoi(m[1])
				lc.skipped += n
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return lc
}
