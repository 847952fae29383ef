package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelitl/itl/otelitl"
)

// result is one run of one configuration on one load.
type result struct {
	load, config string
	round        int
	chunks       int64         // chunks in the load
	cpu          time.Duration // collector CPU from the start of the replay to its exit (the shutdown's flush included)
	cpuTotal     time.Duration // collector CPU over its whole life (rusage), start and shutdown included
	peakRSS      int64         // VmHWM just before shutdown
	counts       sinkCounts    // what reached the sink, shutdown included
	sent         time.Duration // how long the replay took
	maxLag       time.Duration // the latest a request left after it was due
	retries      int64
	loadAvg      float64 // the machine's 1-minute load average at the end of the replay
	problems     []string
	logPath      string // the collector's log, kept when the run had problems
}

// settle is how long a run waits once everything has arrived, for anything extra to arrive too,
// before it stops the collector. Every configuration waits as long, so its idle CPU is the same.
const settle = 2500 * time.Millisecond

// maxFlushWait is the longest connector flush interval a run waits for before it stops the
// collector; with a longer one, the last metrics come with the shutdown's flush.
const maxFlushWait = 5 * time.Second

// expect is the shape every span delivered must have.
func (c config) expect(ld *load) shape {
	figures := c.figures || ld.figures
	switch c.timeline {
	case "":
		if ld.encoding == otelitl.EncodingEvents {
			return shape{timeline: "events", figures: figures}
		}
		return shape{timeline: "compact", figures: figures}
	case "none":
		return shape{figures: figures}
	}
	return shape{timeline: c.timeline, figures: figures}
}

// runOnce starts the collector with c, replays ld to it at o.rate generations per second, waits
// until everything has arrived at the sink, and measures the collector. With profilePath set, the
// pprof extension is on and a CPU profile of o.profileSeconds is taken from 2 s into the replay.
func runOnce(bin string, ld *load, c config, o options, round int, profilePath string) (_ result, err error) {
	r := result{load: ld.name, config: c.name, round: round, chunks: ld.chunkCount()}
	sk, err := startSink()
	if err != nil {
		return r, err
	}
	defer sk.stop()
	otlpAddr, err := freeAddr()
	if err != nil {
		return r, err
	}
	var pprofAddr string
	if profilePath != "" {
		if pprofAddr, err = freeAddr(); err != nil {
			return r, err
		}
	}
	dir, err := os.MkdirTemp("", "bench-pipeline-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	col, err := startCollector(bin, dir, c.render(otlpAddr, sk.addr, pprofAddr, o.compression, o.flush), c.gates)
	if err != nil {
		return r, err
	}
	stopped := false
	defer func() {
		if !stopped {
			col.stop()
		}
		if err != nil {
			// The run's directory goes with it: keep the collector's log beside the report.
			if kept := keepLog(col.log, o.out, round, ld.name, c.name); kept != "" {
				err = fmt.Errorf("%w\n(the collector's whole log is %s)", err, kept)
			}
		}
	}()
	if err := waitTCP(otlpAddr, 60*time.Second, col); err != nil {
		return r, err
	}
	time.Sleep(time.Second) // the collector's start is not measured
	pid := col.cmd.Process.Pid
	cpu0, err := procCPU(pid)
	if err != nil {
		return r, err
	}

	var prof sync.WaitGroup
	var profErr error
	if profilePath != "" {
		prof.Go(func() {
			time.Sleep(2 * time.Second)
			profErr = fetchProfile(pprofAddr, o.profileSeconds, profilePath)
		})
	}
	reqs := ld.reqs
	if c.input != "" {
		if reqs = ld.variants[c.input]; reqs == nil {
			return r, fmt.Errorf("the %s variant of the load was not made", c.input)
		}
	}
	r.sent, r.maxLag, r.retries, err = replay(otlpAddr, reqs, ld.reqSpans, o.rate)
	if err != nil {
		return r, fmt.Errorf("replay: %w\n%s", err, col.logTail())
	}
	r.loadAvg = loadAvg()

	// Drain: every span must reach the sink, and with the connector every gap and TTFT flushed so
	// far. Metrics the connector has not flushed when the spans are in (with its default interval,
	// longer than a run, most of them) come at shutdown, so the CPU figure runs to the process's
	// exit, in every configuration alike.
	deadline := time.Now().Add(90 * time.Second)
	waitMetrics := c.metrics && o.flush <= maxFlushWait
	for time.Now().Before(deadline) {
		s := sk.snapshot()
		if s.spans >= ld.spans && (!waitMetrics || (int64(s.gapObs) >= ld.gaps && int64(s.ttfts) >= ld.spans)) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(settle)
	if r.peakRSS, err = procPeakRSS(pid); err != nil {
		return r, err
	}
	prof.Wait()
	if profErr != nil {
		return r, fmt.Errorf("profile: %w", profErr)
	}
	r.cpuTotal = col.stop()
	stopped = true
	r.cpu = r.cpuTotal - cpu0
	r.counts = sk.snapshot()
	r.problems = check(r.counts, ld, c)
	if r.retries > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d export requests were retried", r.retries))
	}
	if len(r.problems) > 0 {
		// The run's directory goes with it: keep the collector's log beside the report, which
		// names it, so that a loss can be explained.
		if r.logPath = keepLog(col.log, o.out, round, ld.name, c.name); r.logPath != "" {
			r.problems = append(r.problems, "the collector's log is "+r.logPath)
		}
	}
	return r, nil
}

// check compares what reached the sink with what was sent: zero loss, nothing extra, and spans
// of the configuration's shape.
func check(s sinkCounts, ld *load, c config) []string {
	var p []string
	if s.err != nil {
		p = append(p, s.err.Error())
	}
	if s.spans != ld.spans {
		p = append(p, fmt.Sprintf("spans: sent %d, delivered %d", ld.spans, s.spans))
	}
	if c.metrics {
		if int64(s.gapObs) != ld.gaps {
			p = append(p, fmt.Sprintf("gap observations: %d for %d gaps sent", s.gapObs, ld.gaps))
		}
		if int64(s.ttfts) != ld.spans {
			p = append(p, fmt.Sprintf("TTFT observations: %d for %d generations", s.ttfts, ld.spans))
		}
		if s.stalls != ld.stalls {
			p = append(p, fmt.Sprintf("stalls: %d counted, %d sent", s.stalls, ld.stalls))
		}
	} else if s.points != 0 {
		p = append(p, fmt.Sprintf("%d metric points from a configuration without the connector", s.points))
	}
	want := c.expect(ld)
	var n int64
	for sh, k := range s.shapes {
		n += k
		if sh != want {
			p = append(p, fmt.Sprintf("%d sampled spans are %s, not %s", k, sh, want))
		}
	}
	if n == 0 {
		p = append(p, "no span was sampled for its shape")
	}
	return p
}

// replay sends the requests reqs, of reqSpans spans each, to addr as they are, at rate
// generations per second (each request when the spans before it have had their time), from 4
// senders so that one slow answer does not hold the load back. A request the collector refuses is
// sent again (and counted), up to 10 times.
func replay(addr string, reqs [][]byte, reqSpans []int, rate int) (elapsed, maxLag time.Duration, retries int64, err error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallSendMsgSize(256<<20), grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		return 0, 0, 0, err
	}
	defer conn.Close()
	ctx := context.Background()
	due := schedule(reqSpans, rate)
	var next, lag, retried atomic.Int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	begin := time.Now()
	for range 4 {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(reqs) {
					return
				}
				at := begin.Add(due[k])
				if d := time.Until(at); d > 0 {
					time.Sleep(d)
				}
				for l := int64(time.Since(at)); ; {
					if old := lag.Load(); l <= old || lag.CompareAndSwap(old, l) {
						break
					}
				}
				var resp []byte
				var err error
				for try := range 10 {
					if try > 0 {
						retried.Add(1)
						time.Sleep(100 * time.Millisecond)
					}
					if err = conn.Invoke(ctx, traceExportMethod, &reqs[k], &resp); err == nil {
						break
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return time.Since(begin), time.Duration(lag.Load()), retried.Load(), firstErr
}

// fetchProfile saves a CPU profile of seconds from the collector's pprof extension.
func fetchProfile(addr string, seconds int, path string) error {
	cl := http.Client{Timeout: time.Duration(seconds+30) * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// keepLog copies the collector's log of a run that failed or had problems beside the report out,
// named after it, the round (0-based; -1 for a profile's run), the load and the configuration, and
// returns where; "" when it could not.
func keepLog(log, out string, round int, load, config string) string {
	b, err := os.ReadFile(log)
	if err != nil {
		return ""
	}
	which := fmt.Sprintf("round%d", round+1)
	if round < 0 {
		which = "profile"
	}
	path := fmt.Sprintf("%s-%s-%s-%s.collector.log", strings.TrimSuffix(out, filepath.Ext(out)), which, load, config)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil || os.WriteFile(path, b, 0o644) != nil {
		return ""
	}
	return path
}
