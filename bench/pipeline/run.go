package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
	began, ended time.Time // the CPU figure's start (the replay's) and the collector's exit
	loadAvg      float64   // the machine's 1-minute load average at the end of the replay
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

// instance is one configuration's collector, with the sink it exports to, started and ready for
// the load.
type instance struct {
	c           config
	ld          *load
	o           options
	round       int
	profilePath string
	sk          *sink
	col         *collector
	dir         string
	otlpAddr    string
	pprofAddr   string
	cpu0        time.Duration
	r           result
	stopped     bool
	prof        sync.WaitGroup
	profErr     error
}

// startInstance starts a sink and the collector with c exporting to it, and waits until the
// collector listens. With profilePath set, the pprof extension is on.
func startInstance(bin string, ld *load, c config, o options, round int, profilePath string) (_ *instance, err error) {
	in := &instance{c: c, ld: ld, o: o, round: round, profilePath: profilePath,
		r: result{load: ld.name, config: c.name, round: round, chunks: ld.chunkCount()}}
	defer func() {
		if err != nil {
			err = in.close(err)
		}
	}()
	if in.sk, err = startSink(); err != nil {
		return nil, err
	}
	if in.otlpAddr, err = freeAddr(); err != nil {
		return nil, err
	}
	if profilePath != "" {
		if in.pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	if in.dir, err = os.MkdirTemp("", "bench-pipeline-"); err != nil {
		return nil, err
	}
	if in.col, err = startCollector(bin, in.dir, c.render(in.otlpAddr, in.sk.addr, in.pprofAddr, o.compression, o.flush), c.gates); err != nil {
		return nil, err
	}
	if err := waitTCP(in.otlpAddr, 60*time.Second, in.col); err != nil {
		return nil, err
	}
	return in, nil
}

// close stops what is still running and removes the run's directory. When err is not nil (the
// run failed), the collector's log is kept beside the report first, and err names it.
func (in *instance) close(err error) error {
	if in.col != nil && !in.stopped {
		in.col.stop()
		in.stopped = true
	}
	if err != nil && in.col != nil {
		if kept := keepLog(in.col.log, in.o.out, in.round, in.ld.name, in.c.name); kept != "" {
			err = fmt.Errorf("%w\n(the collector's whole log is %s)", err, kept)
		}
	}
	if in.sk != nil {
		in.sk.stop()
	}
	if in.dir != "" {
		os.RemoveAll(in.dir)
	}
	return err
}

// begin reads the collector's CPU so far, the start of what the run measures, and starts the
// profile, if any, 2 s later.
func (in *instance) begin() error {
	var err error
	in.r.began = time.Now()
	if in.cpu0, err = procCPU(in.col.cmd.Process.Pid); err != nil {
		return err
	}
	if in.profilePath != "" {
		in.prof.Go(func() {
			time.Sleep(2 * time.Second)
			in.profErr = fetchProfile(in.pprofAddr, in.o.profileSeconds, in.profilePath)
		})
	}
	return nil
}

// requests are the bytes this configuration is fed: the load as sent, or one of its variants.
func (in *instance) requests() ([][]byte, error) {
	if in.c.input == "" {
		return in.ld.reqs, nil
	}
	if reqs := in.ld.variants[in.c.input]; reqs != nil {
		return reqs, nil
	}
	return nil, fmt.Errorf("the %s variant of the load was not made", in.c.input)
}

// drained tells whether every span has reached the sink and, with the connector flushing within
// a run, every gap and TTFT. Metrics the connector has not flushed when the spans are in (with
// its default interval, longer than a run, most of them) come at shutdown, so the CPU figure runs
// to the process's exit, in every configuration alike.
func (in *instance) drained() bool {
	s := in.sk.snapshot()
	waitMetrics := in.c.metrics && in.o.flush <= maxFlushWait
	return s.spans >= in.ld.spans && (!waitMetrics || (int64(s.gapObs) >= in.ld.gaps && int64(s.ttfts) >= in.ld.spans))
}

// finish reads the peak RSS, stops the collector, and checks what reached the sink.
func (in *instance) finish() error {
	var err error
	if in.r.peakRSS, err = procPeakRSS(in.col.cmd.Process.Pid); err != nil {
		return err
	}
	in.prof.Wait()
	if in.profErr != nil {
		return fmt.Errorf("profile: %w", in.profErr)
	}
	in.r.cpuTotal = in.col.stop()
	in.r.ended, in.stopped = time.Now(), true
	in.r.cpu = in.r.cpuTotal - in.cpu0
	in.r.counts = in.sk.snapshot()
	in.r.problems = check(in.r.counts, in.ld, in.c)
	if in.r.retries > 0 {
		in.r.problems = append(in.r.problems, fmt.Sprintf("%d export requests were retried", in.r.retries))
	}
	if len(in.r.problems) > 0 {
		// The run's directory goes with it: keep the collector's log beside the report, which
		// names it, so that a loss can be explained.
		if in.r.logPath = keepLog(in.col.log, in.o.out, in.round, in.ld.name, in.c.name); in.r.logPath != "" {
			in.r.problems = append(in.r.problems, "the collector's log is "+in.r.logPath)
		}
	}
	return nil
}

// runOnce runs the configuration c alone on ld: see runTogether.
func runOnce(bin string, ld *load, c config, o options, round int, profilePath string) (result, error) {
	rs, err := runTogether(bin, ld, []config{c}, o, round, profilePath)
	if err != nil {
		return result{}, err
	}
	return rs[0], nil
}

// runTogether starts a collector for each of cs, replays ld to all of them at once at o.rate
// generations per second (every request to each collector at the same moment), waits until
// everything has arrived at each one's sink, and measures each collector. Run together, what the
// machine's other tenants do during the run falls on every configuration alike. With profilePath
// set (and one configuration), the pprof extension is on and a CPU profile of o.profileSeconds is
// taken from 2 s into the replay.
func runTogether(bin string, ld *load, cs []config, o options, round int, profilePath string) (_ []result, err error) {
	if profilePath != "" && len(cs) != 1 {
		return nil, fmt.Errorf("a profile is of one configuration run alone, not of %d together", len(cs))
	}
	var ins []*instance
	defer func() {
		for _, in := range ins {
			err = in.close(err) // a failed run's error names each collector's kept log
		}
	}()
	for _, c := range cs {
		in, err := startInstance(bin, ld, c, o, round, profilePath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		ins = append(ins, in)
	}
	time.Sleep(time.Second) // the collectors' start is not measured
	reqs := make([][][]byte, len(ins))
	for i, in := range ins {
		if reqs[i], err = in.requests(); err != nil {
			return nil, err
		}
		if err := in.begin(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	errs := make([]error, len(ins))
	var wg sync.WaitGroup
	for i, in := range ins {
		wg.Go(func() {
			in.r.sent, in.r.maxLag, in.r.retries, errs[i] = replay(in.otlpAddr, reqs[i], ld.reqSpans, o.rate, start)
		})
	}
	wg.Wait()
	la := loadAvg()
	for i, in := range ins {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: replay: %w\n%s", in.c.name, errs[i], in.col.logTail())
		}
		in.r.loadAvg = la
	}

	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && slices.ContainsFunc(ins, func(in *instance) bool { return !in.drained() }) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(settle)
	// Stopped at once, so that none idles while another shuts down.
	for i, in := range ins {
		wg.Go(func() { errs[i] = in.finish() })
	}
	wg.Wait()
	out := make([]result, len(ins))
	for i, in := range ins {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", in.c.name, errs[i])
		}
		out[i] = in.r
	}
	return out, nil
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
// generations per second from begin (each request when the spans before it have had their time), from 4
// senders so that one slow answer does not hold the load back. A request the collector refuses is
// sent again (and counted), up to 10 times.
func replay(addr string, reqs [][]byte, reqSpans []int, rate int, begin time.Time) (elapsed, maxLag time.Duration, retries int64, err error) {
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
