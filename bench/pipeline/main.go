// Command pipeline measures what the itl processor and the itl_metrics connector add to a
// collector, end to end (issue 14): the built otelcol-itl runs as a pass-through (OTLP receiver ->
// batch -> OTLP exporter) and with our components, on the same spans, side by side.
//
// The load is generated once, with otelitl on the OpenTelemetry Go SDK as the load test
// (e2e/load_test.go) sends it, and kept as the encoded OTLP export requests. Every run replays
// those same bytes over OTLP/gRPC at the target rate to a fresh collector, whose exporter sends
// to a sink in this process that counts spans and metric observations, so that zero loss is
// checked on every run. The collector's CPU runs from the start of the replay (/proc/PID/stat) to
// its exit (rusage), the shutdown's flush of the connector's last metrics included, its peak RSS
// from VmHWM. Configurations are interleaved, their
// order rotated each round; the report gives medians and the median of the per-round ratios to
// pass-through. With -together, each round's configurations run at the same time instead, fed the
// same requests at the same moments, so that the machine's other tenants fall on all of them
// alike (make bench-targets).
//
//	make bench-pipeline                        # 1000 generations/s x 200 chunks, 20 s, 3 rounds
//	PIPELINE_SECONDS=5 PIPELINE_ROUNDS=1 make bench-pipeline
//	cd bench && go run ./pipeline -h
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelitl/itl/otelitl"
)

type options struct {
	rate, chunks, eventChunks, seconds, rounds, batch int
	loads, configs, profile                           []string
	profileSeconds                                    int
	analyze                                           []string
	bin, out, compression                             string
	flush                                             time.Duration
	together                                          bool
}

// envInt is the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// envDuration is the duration in the environment variable name, or def.
func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("pipeline", flag.ContinueOnError)
	fs.IntVar(&o.rate, "rate", envInt("PIPELINE_RATE", 1000), "generations per second (env PIPELINE_RATE)")
	fs.IntVar(&o.chunks, "chunks", envInt("PIPELINE_CHUNKS", 200), "chunks per generation of the compact load (env PIPELINE_CHUNKS)")
	fs.IntVar(&o.eventChunks, "event-chunks", envInt("PIPELINE_EVENT_CHUNKS", 100), "chunks per generation of the event load (env PIPELINE_EVENT_CHUNKS)")
	fs.IntVar(&o.seconds, "seconds", envInt("PIPELINE_SECONDS", 20), "seconds of load per run (env PIPELINE_SECONDS)")
	fs.IntVar(&o.rounds, "rounds", envInt("PIPELINE_ROUNDS", 3), "rounds; each runs every configuration once (env PIPELINE_ROUNDS)")
	fs.IntVar(&o.batch, "batch", envInt("PIPELINE_BATCH", 100), "spans per export request: what the SDK's batch span processor sends at 1000/s with its 100 ms timeout (env PIPELINE_BATCH)")
	loads := fs.String("loads", envStr("PIPELINE_LOADS", "compact,events,figures-compact,figures-events"), "loads: compact (otelitl's compact timelines, -chunks) and events (chunk events, -event-chunks), without the figures today's client writes beside them, as an older client sends them: the itl processor computes them; figures-compact and figures-events, the same spans with the client's figures, which the processor keeps (env PIPELINE_LOADS)")
	cfgs := fs.String("configs", envStr("PIPELINE_CONFIGS", "passthrough,reencoded,annotated,full,drop_timeline,compact_events"), "configurations (env PIPELINE_CONFIGS): passthrough, passthrough_twin (a second pass-through, the A/A control: its ratio is the harness's own noise), full, drop_timeline, compact_events (event loads only), processor or connector (full without the other component), passthrough_nobatch and connector_nobatch (passthrough and connector without the batch processor: the connector then reads each request as the receiver decoded it), floor (the least any implementation of the two must do: a lower bound; the run then uses bench/floorcol's binary) and floor_exact (floor, also selecting the exact percentiles), floor_read (the least the connector must do on spans that carry their figures: read every arrival, count every gap), annotated (passthrough fed the spans as the itl processor annotates them: what carrying the annotations costs) with its control reencoded, passthrough_eb and full_eb (batching in the exporter instead of the batch processor), and shipped (the layout exporter-config/otlp.yaml ships: compact_events, the connector after the processor, batching in the exporter) with shipped_split (the same components, the connector in a pipeline of its own), drop_timeline_eb (drop_timeline, batching in the exporter), passthrough_eb_pool and full_eb_pool (the _eb configurations with the collector's pdata.useProtoPooling feature gate on), fanout_pool (no component of ours: a batch processor fanned out to two exporters with that gate on, which loses data) and split_pool (the receiver's requests in two pipelines that change nothing, with that gate on, which loses data too)")
	prof := fs.String("profile", envStr("PIPELINE_PROFILE", "full"), "configurations to profile after the rounds, as CONFIG (on the first load) or CONFIG:LOAD, one more run each with the pprof extension on; none for none (env PIPELINE_PROFILE)")
	fs.IntVar(&o.profileSeconds, "profile-seconds", envInt("PIPELINE_PROFILE_SECONDS", 10), "length of each CPU profile, at most -seconds minus 4 (env PIPELINE_PROFILE_SECONDS)")
	fs.StringVar(&o.compression, "compression", envStr("PIPELINE_COMPRESSION", "gzip"), "the OTLP exporter's compression, the same in every configuration: gzip (its default) or none (env PIPELINE_COMPRESSION)")
	fs.DurationVar(&o.flush, "flush", envDuration("PIPELINE_FLUSH", 15*time.Second), "the itl_metrics connector's metrics_flush_interval (its default is 15s); metrics not yet flushed when the spans are in are flushed at shutdown, which the CPU figure includes (env PIPELINE_FLUSH)")
	fs.StringVar(&o.bin, "bin", os.Getenv("PIPELINE_BIN"), "a built otelcol-itl; empty builds cmd/otelcol-itl, or bench/floorcol when the floor configuration runs (env PIPELINE_BIN)")
	fs.BoolVar(&o.together, "together", envStr("PIPELINE_TOGETHER", "") == "1", "run each round's configurations of a load at the same time, each with its own collector and sink, fed the same requests at the same moments, so that what the machine's other tenants do during a round falls on all of them alike (the ratios then resolve a few percent where one after the other they do not); their collectors share the machine's CPUs, so give it two to four configurations on a small machine, and include passthrough_twin to see the harness's own noise (env PIPELINE_TOGETHER=1)")
	analyze := fs.String("analyze", "", "only print the stage breakdown of these CPU profiles (comma-separated; merged), then exit")
	fs.StringVar(&o.out, "out", envStr("PIPELINE_OUT", "bench-pipeline.txt"), "the report; profiles go beside it (env PIPELINE_OUT)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.loads, o.configs, o.profile, o.analyze = splitList(*loads), splitList(*cfgs), splitList(*prof), splitList(*analyze)
	if o.rate <= 0 || o.chunks < 2 || o.eventChunks < 2 || o.seconds <= 0 || o.rounds <= 0 || o.batch <= 0 || o.profileSeconds <= 0 {
		return o, fmt.Errorf("rate, seconds, rounds, batch and profile-seconds must be above 0, chunks above 1")
	}
	if len(o.profile) == 1 && o.profile[0] == "none" {
		o.profile = nil
	}
	// A profile starts 2 s into the replay and must end before the drain: a short load gets a
	// shorter profile, or none.
	if o.profileSeconds+4 > o.seconds && len(o.profile) > 0 {
		if o.profileSeconds = o.seconds - 4; o.profileSeconds < 1 {
			o.profile = nil
		}
	}
	if o.flush < 100*time.Millisecond || o.flush > time.Hour {
		return o, fmt.Errorf("flush %v is outside the connector's [100ms, 1h]", o.flush)
	}
	if o.compression != "gzip" && o.compression != "none" { // the sink decompresses gzip only
		return o, fmt.Errorf("compression %q is not known; use gzip or none", o.compression)
	}
	for _, l := range o.loads {
		if k := strings.TrimPrefix(l, figuresPrefix); k != "compact" && k != "events" {
			return o, fmt.Errorf("load %q is not known; use compact, events, figures-compact or figures-events", l)
		}
	}
	if len(o.loads) == 0 || len(o.configs) == 0 {
		return o, fmt.Errorf("no load or no configuration")
	}
	for _, c := range o.configs {
		if _, ok := configByName(c); !ok {
			return o, fmt.Errorf("configuration %q is not known", c)
		}
	}
	for _, p := range o.profile {
		c, l, hasLoad := strings.Cut(p, ":")
		if _, ok := configByName(c); !ok {
			return o, fmt.Errorf("profile %q: configuration %q is not known", p, c)
		}
		if hasLoad && !slices.Contains(o.loads, l) {
			return o, fmt.Errorf("profile %q: load %q is not among -loads", p, l)
		}
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if len(o.analyze) > 0 {
		b, err := readProfile(o.analyze...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var w strings.Builder
		b.format(&w, 25)
		fmt.Print(w.String())
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-pipeline:", err)
		os.Exit(1)
	}
}

// repoRoot finds the repository from the working directory (bench/ under make).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cmd", "otelcol-itl", "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no cmd/otelcol-itl above %s", dir)
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(o options) error {
	bin := o.bin
	if bin != "" && o.needsFloor() {
		// Found now, not when the first floor configuration's collector refuses its config.
		if err := checkFloorBinary(bin); err != nil {
			return err
		}
	}
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "bench-pipeline-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		src, what := filepath.Join("cmd", "otelcol-itl"), "cmd/otelcol-itl"
		if o.needsFloor() {
			src, what = filepath.Join("bench", "floorcol"), "bench/floorcol (otelcol-itl's pipeline components and the floor processor), for every configuration of this run"
		}
		bin = filepath.Join(dir, "otelcol-itl")
		logf("building %s", what)
		if err := build(filepath.Join(root, src), bin); err != nil {
			return err
		}
	}

	var loads []*load
	for _, name := range o.loads {
		kind, figures := strings.CutPrefix(name, figuresPrefix)
		enc, chunks := otelitl.EncodingCompact, o.chunks
		if kind == "events" {
			enc, chunks = otelitl.EncodingEvents, o.eventChunks
		}
		t := time.Now()
		ld, err := generate(o.rate, chunks, o.seconds, o.batch, enc, figures)
		if err != nil {
			return fmt.Errorf("generating the %s load: %w", name, err)
		}
		ld.kind, ld.name = name, fmt.Sprintf("%s-%d", name, chunks)
		logf("load %s: %d generations in %d requests, %.1f MB, generated in %v", ld.name, ld.spans, len(ld.reqs), float64(ld.bytes)/1e6, time.Since(t).Round(time.Millisecond))
		if !ld.figures && (o.runs("annotated") || o.runs("reencoded")) {
			if err := makeVariants(ld); err != nil {
				return fmt.Errorf("annotating the %s load: %w", ld.name, err)
			}
			for _, v := range []string{"reencoded", "annotated"} {
				logf("load %s %s: %.1f MB (%+.1f B per span)", ld.name, v, float64(ld.variantBytes[v])/1e6, float64(ld.variantBytes[v]-ld.bytes)/float64(ld.spans))
			}
		}
		loads = append(loads, ld)
	}

	var results []result
	for round := range o.rounds {
		for _, ld := range loads {
			cs := configsFor(o.configs, ld)
			// A different configuration goes first each round.
			cs = slices.Concat(cs[round%len(cs):], cs[:round%len(cs)])
			groups := [][]config{cs}
			if !o.together {
				groups = nil
				for _, c := range cs {
					groups = append(groups, []config{c})
				}
			}
			for _, g := range groups {
				var names []string
				for _, c := range g {
					names = append(names, c.name)
				}
				logf("round %d/%d, load %s, %s", round+1, o.rounds, ld.name, strings.Join(names, " together with "))
				rs, err := runTogether(bin, ld, g, o, round, "")
				if err != nil {
					return fmt.Errorf("%s on %s, round %d: %w", strings.Join(names, ", "), ld.name, round+1, err)
				}
				for _, r := range rs {
					logf("  %s: CPU %.2f s (%.3f s per million chunks), peak RSS %.0f MiB, %d spans, %d gap observations, %d metric points, max lag %v%s",
						r.config, r.cpu.Seconds(), r.cpu.Seconds()/(float64(ld.chunkCount())/1e6), float64(r.peakRSS)/(1<<20), r.counts.spans, r.counts.gapObs, r.counts.points,
						r.maxLag.Round(time.Millisecond), problemText(r.problems))
					if r.logPath != "" {
						logf("  the collector's log ends:\n%s", tail(r.logPath, 3000))
					}
				}
				results = append(results, rs...)
			}
		}
	}

	var profiles []profileRun
	dir := filepath.Dir(o.out)
	for _, p := range o.profile {
		name, kind, _ := strings.Cut(p, ":")
		c, _ := configByName(name)
		ld := loads[0]
		for _, l := range loads {
			if l.kind == kind {
				ld = l
			}
		}
		path, err := filepath.Abs(filepath.Join(dir, fmt.Sprintf("bench-pipeline-%s-%s.pprof", ld.name, c.name)))
		if err != nil {
			return err
		}
		logf("profiling %s on %s for %d s: %s", c.name, ld.name, o.profileSeconds, path)
		r, err := runOnce(bin, ld, c, o, -1, path)
		if err != nil {
			return fmt.Errorf("profiling %s: %w", c.name, err)
		}
		b, err := readProfile(path)
		if err != nil {
			return err
		}
		profiles = append(profiles, profileRun{load: ld.name, config: c.name, path: path, r: r, b: b})
	}

	report := formatReport(o, loads, results, profiles)
	fmt.Print(report)
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
		return err
	}
	logf("report written to %s", o.out)
	for _, r := range results {
		if len(r.problems) > 0 {
			return fmt.Errorf("some runs lost or changed data: see the report")
		}
	}
	return nil
}

// build builds the collector in the module directory src, as its module, into bin.
func build(src, bin string) error {
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", src, err, out)
	}
	return nil
}

// runs tells whether the configuration named runs, in the rounds or profiled.
func (o options) runs(name string) bool {
	if slices.Contains(o.configs, name) {
		return true
	}
	for _, p := range o.profile {
		if c, _, _ := strings.Cut(p, ":"); c == name {
			return true
		}
	}
	return false
}

// needsFloor tells whether a configuration that runs needs bench/floorcol's binary.
func (o options) needsFloor() bool {
	for _, c := range configs {
		if c.floor && o.runs(c.name) {
			return true
		}
	}
	return false
}

// checkFloorBinary makes sure bin, a collector given with -bin, has the floor processor, from the
// component list its components command prints.
func checkFloorBinary(bin string) error {
	out, err := exec.Command(bin, "components").Output()
	if err != nil {
		return fmt.Errorf("-bin %s: listing its components (%s components): %v", bin, bin, err)
	}
	if !strings.Contains(string(out), "name: itl_floor\n") {
		return fmt.Errorf("-bin %s has no itl_floor processor, which the floor configurations run: leave -bin empty to build bench/floorcol, or pass a build of it (cd bench/floorcol && go build)", bin)
	}
	return nil
}

// figuresPrefix marks a load whose spans carry the figures the client writes (load.figures).
const figuresPrefix = "figures-"

// configsFor is the configurations that run on ld, in the order asked.
func configsFor(names []string, ld *load) []config {
	var cs []config
	for _, n := range names {
		c, _ := configByName(n)
		if c.eventsOnly && ld.encoding != otelitl.EncodingEvents {
			continue
		}
		if ld.figures && (c.input != "" || (c.floor && !c.readOnly)) {
			continue // annotated and its control, and the floors that write figures, measure what a collector computes
		}
		cs = append(cs, c)
	}
	return cs
}

func problemText(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return "; PROBLEMS: " + strings.Join(p, "; ")
}

// tail is the last n bytes of the file at path, or why it cannot be read.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b[max(0, len(b)-n):])
}
