// Command loadtest ramps concurrency against an OpenAI-compatible server (fakellm in the process by
// default) through the openai-go wrapper, exports over OTLP to an embedded collector (or an external
// one), prints how TTFT, the gaps between chunks and stalls move with concurrency, and writes
// itl-report.html: the same table, the TTFT and gap distributions, TTFT and gap p50/p99 against
// concurrency with the batch limit marked, and the cadence of the generation with the largest gap.
//
//	go run ./examples/loadtest                           # levels 1..32 against fakellm (max batch 8)
//	go run ./examples/loadtest -levels 1,4,16 -duration 10s
//	OPENAI_BASE_URL=http://127.0.0.1:8000/v1 go run ./examples/loadtest -model fake-gpt
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/examples/internal/embed"
	"github.com/otelitl/itl/examples/internal/export"
	"github.com/otelitl/itl/examples/internal/view"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

const levelKey = "loadtest.concurrency"

type options struct {
	levels   []int
	duration time.Duration
	model    string
	endpoint string
	report   string
	maxBatch int
	prefill  time.Duration
	stall    time.Duration
	seed     uint64
}

func main() {
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	if err := run(o, os.Stdout, view.Progress(os.Stderr, 5*time.Second)); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// parseFlags defines the load test's flags on fs (which already holds demo's -endpoint) and parses
// args.
func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	levels := fs.String("levels", "1,2,4,8,16,32", "concurrency levels to ramp through")
	fs.DurationVar(&o.duration, "duration", 4*time.Second, "how long each level starts generations; it then waits for those still streaming")
	fs.StringVar(&o.model, "model", "fake-gpt", "model to ask")
	fs.StringVar(&o.report, "report", "itl-report.html", "where to write the HTML report")
	fs.IntVar(&o.maxBatch, "max-batch", 8, "the in-process fakellm's max batch: levels above it queue")
	fs.DurationVar(&o.prefill, "prefill-per-tok", 250*time.Microsecond, "the in-process fakellm's prefill cost per prompt token: long prompts stall the batch")
	fs.DurationVar(&o.stall, "stall", itlconv.DefaultStallThreshold, "gaps above this count as stalls, in the table and the charts")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if f := fs.Lookup("endpoint"); f != nil { // demo's -endpoint: an external collector, and then no report
		o.endpoint = f.Value.String()
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: every setting is a flag, such as -levels 1,2,4 (-h lists them)", fs.Arg(0))
	}
	for _, s := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-levels: %q is not a positive number", s)
		}
		o.levels = append(o.levels, n)
	}
	switch {
	case o.duration <= 0:
		return o, fmt.Errorf("-duration %v: give each level some time, such as 4s", o.duration)
	case o.stall <= 0:
		return o, fmt.Errorf("-stall %v: give the gap above which a gap is a stall, such as 250ms", o.stall)
	}
	if o.report != "" {
		// Checked now, not after the run: a report that cannot be written would lose the run.
		if fi, err := os.Stat(filepath.Dir(o.report)); err != nil || !fi.IsDir() {
			return o, fmt.Errorf("-report %s: its directory %s does not exist; give a path in one that does, or -report '' for none", o.report, filepath.Dir(o.report))
		}
	}
	return o, nil
}

func run(o options, out, progress io.Writer) error {
	base := os.Getenv(demo.OpenAI.URLVar)
	maxBatch := 0
	server := "the server at " + base // what the report says was loaded
	if base == "" {
		cfg := engine.DefaultConfig()
		cfg.MaxBatch, cfg.PrefillPerTok, cfg.Seed = o.maxBatch, o.prefill, o.seed
		u, stop, err := demo.Fakellm(cfg, o.model)
		if err != nil {
			return err
		}
		defer stop()
		base, maxBatch = u+demo.OpenAI.Root, cfg.MaxBatch
		settings := fmt.Sprintf("max batch %d, steps of %s + %s a sequence, prefill %s a prompt token",
			cfg.MaxBatch, view.Duration(cfg.StepBase.Seconds()), view.Duration(cfg.StepPerSeq.Seconds()), view.Duration(cfg.PrefillPerTok.Seconds()))
		server = fmt.Sprintf("fakellm, the simulated server, inside the load test (%s, seed %d)", settings, cfg.Seed)
		fmt.Fprintf(out, "fakellm inside the load test at %s: %s\n", base, settings)
	} else {
		fmt.Fprintf(out, "%s=%s: loading that server with model %s\n", demo.OpenAI.URLVar, base, o.model)
	}
	var col *embed.Collector
	endpoint := o.endpoint
	if endpoint == "" {
		var err error
		col, err = embed.Start(embed.Options{KeepSpans: true, StallThreshold: o.stall,
			Dimensions: []string{string(semconv.GenAIRequestModelKey), levelKey}})
		if err != nil {
			return fmt.Errorf("starting the embedded collector: %w", err)
		}
		defer col.Stop()
		endpoint = col.Endpoint
	}
	exp, err := export.New(context.Background(), endpoint)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("otelitl-loadtest"))))
	defer func() { _ = tp.Shutdown(context.Background()) }() // on the error paths; the end shuts down first
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey(demo.OpenAI.Key()), option.WithMaxRetries(0))

	var failures, total atomic.Int64
	var firstErr error
	var errOnce sync.Once
	began := time.Now()
	walls := map[int]time.Duration{}
	// A server that refuses connections refuses them all: the run stops at the first, instead of
	// spinning through every level.
	runCtx, refused := context.WithCancel(context.Background())
	defer refused()
	for _, level := range o.levels {
		if runCtx.Err() != nil {
			break
		}
		// One Instrumentation per level, so that every span carries its level for the breakdown.
		in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithAttributes(attribute.Int(levelKey, level)))
		ctx, cancel := context.WithTimeout(runCtx, o.duration)
		var done, inflight atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := range level {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(o.seed, uint64(level*1000+w)))
				for ctx.Err() == nil {
					inflight.Add(1)
					// Prompts of 200 to 1500 tokens: long ones stall the batch while they prefill.
					prompt := strings.Repeat("context ", 100+rng.IntN(650))
					s := openaiitl.NewChatStreaming(context.Background(), in, &client.Chat.Completions, openai.ChatCompletionNewParams{
						Model: o.model, MaxTokens: openai.Int(int64(40 + rng.IntN(120))),
						Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
						StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
					})
					for s.Next() {
					}
					if err := s.Err(); err != nil {
						failures.Add(1)
						errOnce.Do(func() { firstErr = err })
						if errors.Is(err, syscall.ECONNREFUSED) {
							refused()
						}
					} else {
						done.Add(1) // the progress bar counts the generations that streamed
					}
					_ = s.Close()
					inflight.Add(-1)
					total.Add(1)
				}
			})
		}
		// The level lasts o.duration; the generations it started then finish, and count for it.
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		tick := time.NewTicker(200 * time.Millisecond)
	loop:
		for {
			select {
			case <-finished:
				break loop
			case <-tick.C:
				bar(progress, level, time.Since(start), o.duration, done.Load(), inflight.Load())
			}
		}
		tick.Stop()
		cancel()
		walls[level] = time.Since(start)
		bar(progress, level, time.Since(start), o.duration, done.Load(), 0)
		fmt.Fprintln(progress)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		return fmt.Errorf("exporting spans: %w", err)
	}
	if err := exp.Err(); err != nil {
		return err
	}
	if n := failures.Load(); n > 0 && (n == total.Load() || runCtx.Err() != nil) {
		return fmt.Errorf("every generation failed (%d); the first: %w", n, explain(firstErr, base, o.model))
	} else if n > 0 {
		fmt.Fprintf(out, "%d of %d generations failed; the first: %v\n", n, total.Load(), explain(firstErr, base, o.model))
	}
	if col == nil {
		fmt.Fprintf(out, "spans sent to %s: the figures are that collector's (no table and no report here; add %s to its connector's dimensions to split them by level)\n", endpoint, levelKey)
		return nil
	}
	if total.Load() == 0 {
		return fmt.Errorf("no generation finished within -duration %v a level: give it more time, such as 4s", o.duration)
	}
	col.Stop()
	md, _ := col.Metrics()
	levels := figuresByLevel(md, walls)
	fmt.Fprintln(out)
	printLevels(out, levels)
	data := reportData{Levels: levels, Stall: o.stall.Seconds(), MaxBatch: maxBatch,
		Config: fmt.Sprintf("%s, each starting generations for %s, against %s, model %s, %s", view.Count(len(o.levels), "level"), tickDuration(o.duration.Seconds()), server, o.model, began.Format(time.RFC3339))}
	collectTimelines(col, &data)
	if o.report == "" {
		return nil
	}
	f, err := os.Create(o.report)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writeReport(f, data); err != nil {
		return fmt.Errorf("writing %s: %w", o.report, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", o.report, err)
	}
	fmt.Fprintf(out, "\nreport written to %s\n", o.report)
	return nil
}

// explain adds the server's message, which openai-go's error summary leaves out, and a hint.
func explain(err error, base, model string) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.RawJSON()
		}
		return demo.OpenAI.Explain(err, base, model, apiErr.StatusCode, msg)
	}
	return demo.OpenAI.Explain(err, base, model, 0, "")
}

// bar draws a level's progress: its time, then the generations it started finishing.
func bar(w io.Writer, level int, elapsed, total time.Duration, done, inflight int64) {
	const width = 24
	n := min(int(elapsed*width/total), width)
	noun := "generations"
	if done == 1 {
		noun = "generation"
	}
	line := fmt.Sprintf("\rconcurrency %3d [%s%s] %6s %5d %s", level, strings.Repeat("=", n), strings.Repeat(" ", width-n), view.Duration(elapsed.Seconds()), done, noun)
	if elapsed >= total && inflight > 0 {
		line += fmt.Sprintf(", waiting for %d still streaming ", inflight)
	} else {
		line += strings.Repeat(" ", 30) // erase a longer line before
	}
	fmt.Fprint(w, line) // one write a frame: view.LineProgress keeps or drops a frame whole
}

// figuresByLevel reads each level's figures from the connector's metrics.
// walls holds the wall time of each level, from its start to the end of its last generation.
func figuresByLevel(md pmetric.Metrics, walls map[int]time.Duration) []levelFigures {
	byLevel := map[int]*levelFigures{}
	hists := map[int]map[string]pmetric.ExponentialHistogramDataPoint{}
	pwalk.Metrics(md, func(m pmetric.Metric) {
		switch m.Type() {
		case pmetric.MetricTypeExponentialHistogram:
			dps := m.ExponentialHistogram().DataPoints()
			for d := range dps.Len() {
				dp := dps.At(d)
				lv, ok := dp.Attributes().Get(levelKey)
				if !ok {
					continue
				}
				level, _ := strconv.Atoi(lv.AsString())
				if byLevel[level] == nil {
					byLevel[level] = &levelFigures{Concurrency: level}
					hists[level] = map[string]pmetric.ExponentialHistogramDataPoint{}
				}
				switch m.Name() {
				case itlconv.Duration.Name:
					byLevel[level].Generations += dp.Count()
				case itlconv.TokenUsage.Name:
					if t, _ := dp.Attributes().Get(string(semconv.GenAITokenTypeKey)); t.Str() == itlconv.TokenTypeOutput {
						byLevel[level].OutputTokensPerSecond += dp.Sum() / walls[level].Seconds()
					}
				default:
					h, ok := hists[level][m.Name()]
					if !ok {
						h = pmetric.NewExponentialHistogramDataPoint()
						hists[level][m.Name()] = h
					}
					view.Merge(h, dp)
				}
			}
		case pmetric.MetricTypeSum:
			if m.Name() != itlconv.Stalls.Name { // the generations' count is a sum too
				return
			}
			dps := m.Sum().DataPoints()
			for d := range dps.Len() {
				if lv, ok := dps.At(d).Attributes().Get(levelKey); ok {
					level, _ := strconv.Atoi(lv.AsString())
					if byLevel[level] != nil {
						byLevel[level].Stalls += dps.At(d).IntValue()
					}
				}
			}
		}
	})
	var out []levelFigures
	for level, f := range byLevel {
		h := func(name string) pmetric.ExponentialHistogramDataPoint {
			if dp, ok := hists[level][name]; ok {
				return dp
			}
			return pmetric.NewExponentialHistogramDataPoint() // no observation: the quantiles are NaN
		}
		f.TTFTp50 = view.Quantile(h(itlconv.TimeToFirstChunk.Name), 0.5)
		f.TTFTp99 = view.Quantile(h(itlconv.TimeToFirstChunk.Name), 0.99)
		f.GapP50 = view.Quantile(h(itlconv.TimePerOutputChunk.Name), 0.5)
		f.GapP99 = view.Quantile(h(itlconv.TimePerOutputChunk.Name), 0.99)
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b levelFigures) int { return a.Concurrency - b.Concurrency })
	return out
}

// printLevels prints the table of the report, aligned whatever the widths.
func printLevels(w io.Writer, levels []levelFigures) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
	for _, l := range levels {
		fmt.Fprintln(tw, strings.Join(l.row(), "\t")+"\t")
	}
	_ = tw.Flush()
}

// collectTimelines reads every span's timeline back, as the collector does, for the distributions
// and the slowest generation's cadence.
func collectTimelines(col *embed.Collector, d *reportData) {
	dec := genaispan.New(genaispan.Config{})
	worst := -1.0
	for _, span := range col.Spans() {
		r := dec.Decode(span)
		if !r.Valid || r.Timeline.Len() == 0 {
			continue
		}
		ttft, ok := r.Timeline.TTFT()
		if ok && r.Complete {
			d.TTFTs = append(d.TTFTs, ttft)
		}
		if !ok {
			ttft = math.NaN()
		}
		var gaps []float64
		maxGap := 0.0
		for i := range r.Timeline.GapCount() {
			g := r.Timeline.Gap(i)
			gaps = append(gaps, g)
			maxGap = max(maxGap, g)
		}
		d.Gaps = append(d.Gaps, gaps...)
		if maxGap > worst {
			worst = maxGap
			level := 0
			if v, ok := span.Attributes().Get(levelKey); ok {
				level = int(v.Int())
			}
			d.Slow = cadence{Concurrency: level, TraceID: span.TraceID().String(), TTFT: ttft, Gaps: gaps}
		}
	}
}
