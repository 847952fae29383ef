package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A configuration of the collector under test. Every one receives OTLP/gRPC, batches the spans
// as the load test does and exports them, and the metrics, to the sink over OTLP/gRPC.
type config struct {
	name    string
	about   string
	metrics bool // the itl_metrics connector runs: the sink must get one gap observation per gap
	// events is true for a configuration that only differs from another on event timelines.
	eventsOnly bool
	// input, if not empty, is the variant of the load the collector is fed instead of the load as
	// sent, made once in the harness before the rounds: "annotated" (as the itl processor annotates
	// it) or "reencoded" (decoded and encoded again by pdata, the control for annotated).
	input string
	// base, if not empty, is the configuration this one is also compared with, per round, besides
	// passthrough (the report prints the ratio, and baseAbout, what it measures).
	base, baseAbout string
	// What every exported span must carry: its timeline as sent (""), compacted ("compact") or
	// none ("none"); and the processor's figures.
	timeline string
	figures  bool
	// floor: the configuration runs the floor processor, which only bench/floorcol's binary has;
	// a run that includes it runs every configuration on that binary.
	floor bool
	// readOnly: the configuration adds nothing to the spans, so it runs on the figures loads too,
	// where the configurations that measure computing the figures do not.
	readOnly bool
	// gates, if not empty, is the collector's --feature-gates flag.
	gates string
	yaml  string
}

const common = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: {{OTLP}}
        max_recv_msg_size_mib: 64
exporters:
  otlp/sink:
    endpoint: {{SINK}}
    tls:
      insecure: true
    compression: {{COMPRESSION}}
    timeout: 30s  # not the default 5s: on a starved machine a slow answer would be sent again, a duplicate
    sending_queue:
      enabled: true
      queue_size: 20000
connectors:
  itl_metrics:
    aggregation_temporality: delta
    metrics_flush_interval: {{FLUSH}}
`

// floorService is the pipeline of the floor configurations: the floor processor, then batching.
const floorService = `
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl_floor, batch]
      exporters: [otlp/sink]
`

const batch = `
  batch:
    send_batch_size: 2048
    timeout: 200ms
`

var passthroughYAML = common + "processors:" + batch + `
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp/sink]
`

// configs are every configuration: the batch processor's, then the same batching in the exporter.
var configs = append(baseConfigs,
	config{
		name:  "passthrough_eb",
		about: "receiver -> exporter, batching in the exporter's sending queue (sending_queue::batch: 2048 spans or 200ms) instead of the batch processor",
		yaml:  exporterBatching(passthroughYAML),
	},
	config{
		// The exporter's batcher declares that it changes the data, so the collector copies every
		// request for it when the connector reads the same requests.
		name:      "full_eb",
		figures:   true,
		about:     "receiver -> itl -> [itl_metrics, exporter]; itl_metrics -> exporter, batching in the exporter",
		metrics:   true,
		base:      "passthrough_eb",
		baseAbout: "what our components cost when the exporter batches",
		yaml:      exporterBatching(fullYAML),
	},
	config{
		// The layout exporter-config/otlp.yaml, otlphttp.yaml and gateway.yaml ship (without their
		// memory_limiter): one pipeline, the connector after the processor, reading the compacted
		// spans, which carry the same timeline to the microsecond; the collector copies each
		// request, compacted, for the exporter's batcher.
		name:      "shipped",
		timeline:  "compact",
		figures:   true,
		about:     "receiver -> itl (compact_events) -> [itl_metrics, exporter]; itl_metrics -> exporter, batching in the exporter: the layout of exporter-config/otlp.yaml",
		metrics:   true,
		base:      "passthrough_eb",
		baseAbout: "what the shipped OTLP configurations cost against a pass-through that batches alike",
		yaml:      exporterBatching(strings.Replace(fullYAML, "processors:\n  itl:", "processors:\n  itl:\n    compact_events: true", 1)),
	},
	config{
		// The same components as shipped, with the connector in a pipeline of its own that reads
		// the spans as they arrive, as the OTLP configurations were laid out before: the collector
		// copies every request, as it arrived, for the pipeline whose processor compacts it.
		name:      "shipped_split",
		timeline:  "compact",
		figures:   true,
		about:     "traces/metrics: receiver -> itl_metrics; traces/store: receiver -> itl (compact_events) -> exporter, batching in the exporter",
		metrics:   true,
		base:      "passthrough_eb",
		baseAbout: "the shipped components with a pipeline of its own for the connector, against a pass-through that batches alike",
		yaml:      exporterBatching(compactEventsYAML),
	},
	config{
		// drop_timeline's layout, batching in the exporter: the exporter is alone in its pipeline,
		// so the batcher adds no copy to the one the receiver makes for the second pipeline.
		name:      "drop_timeline_eb",
		timeline:  "none",
		figures:   true,
		about:     "drop_timeline, batching in the exporter",
		metrics:   true,
		base:      "passthrough_eb",
		baseAbout: "drop_timeline's layout against a pass-through that batches alike",
		yaml:      exporterBatching(dropTimelineYAML),
	},
	config{
		// No batching: each request is exported as it came. With the connector, it then reads each
		// request's spans right after the receiver decoded them, where behind the batch
		// processor it reads them up to its timeout later, after other requests' work has gone
		// through the CPU's caches (connector_nobatch against passthrough_nobatch).
		name:  "passthrough_nobatch",
		about: "OTLP receiver -> OTLP exporter, no batching: each request exported as it came",
		yaml:  withoutBatching(passthroughYAML),
	},
	config{
		name:      "connector_nobatch",
		about:     "receiver -> [itl_metrics, exporter]; itl_metrics -> exporter, no batching: the connector reads each request as the receiver decoded it",
		metrics:   true,
		base:      "passthrough_nobatch",
		baseAbout: "what the connector costs when it reads each request right after the receiver decoded it",
		yaml:      withoutBatching(connectorYAML),
	},
	config{
		// pdata.useProtoPooling (alpha since v0.133.0) returns every request's protos to pools once
		// the pipeline is done with it, and takes new ones from them: what it saves a collector is
		// mostly its GC's work, which our components add to with their allocations. Measured with
		// the batching in the exporter: with the batch processor before two consumers, collector
		// v0.165 releases each batch when the first consumer returns, while the second still
		// holds it (fanout_pool).
		name:      "passthrough_eb_pool",
		about:     "passthrough_eb with the pdata.useProtoPooling feature gate on",
		base:      "passthrough_eb",
		baseAbout: "what the gate saves a pass-through that batches in the exporter",
		gates:     protoPooling,
		yaml:      exporterBatching(passthroughYAML),
	},
	config{
		name:      "full_eb_pool",
		figures:   true,
		about:     "full_eb with the pdata.useProtoPooling feature gate on",
		metrics:   true,
		base:      "passthrough_eb_pool",
		baseAbout: "what our components cost when both sides pool pdata's protos",
		gates:     protoPooling,
		yaml:      exporterBatching(fullYAML),
	},
	config{
		// No component of ours: the batch processor's batches go to two exporters, the debug
		// exporter first or second as the collector orders them. With the gate on, collector
		// v0.165 gives the first consumer's ownership wrapper the batch, which releases it to the
		// pools when that consumer returns: the second exports recycled protos, or nothing, or
		// panics. This configuration shows it; a run loses data in most rounds.
		name:  "fanout_pool",
		about: "passthrough with the debug exporter beside the sink and the pdata.useProtoPooling feature gate on: no component of ours; the gate's loss of a batch processor's batches fanned out",
		gates: protoPooling,
		yaml: strings.Replace(strings.Replace(passthroughYAML, "exporters: [otlp/sink]", "exporters: [debug, otlp/sink]", 1),
			"exporters:\n", "exporters:\n  debug:\n    verbosity: basic\n    sampling_initial: 1\n    sampling_thereafter: 1000000\n", 1),
	},
	config{
		// The gate's other loss: the receiver's requests go to two pipelines, neither of which
		// changes them (the connector alone, the exporter alone), so no clone is made and the
		// first pipeline's ownership wrapper releases each request while the second still reads it.
		name:    "split_pool",
		metrics: true,
		about:   "traces/metrics: receiver -> itl_metrics; traces/store: receiver -> exporter, with the pdata.useProtoPooling feature gate on: a receiver's requests in two pipelines that change nothing, which the gate loses",
		gates:   protoPooling,
		yaml:    common + strings.Replace(storeLayout, "      processors: [itl, batch]\n", "", 1),
	})

// protoPooling is the feature gate of the _pool configurations.
const protoPooling = "pdata.useProtoPooling"

// dropTimelineYAML and compactEventsYAML are the layout of collector/itlprocessor/README.md
// (storeLayout), the processor dropping or compacting the timeline.
var (
	dropTimelineYAML  = common + "processors:\n  itl:\n    drop_timeline: true" + batch + storeLayout
	compactEventsYAML = common + "processors:\n  itl:\n    compact_events: true" + batch + storeLayout
)

var fullYAML = common + "processors:\n  itl:" + batch + `
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl, batch]
      exporters: [itl_metrics, otlp/sink]
    metrics:
      receivers: [itl_metrics]
      exporters: [otlp/sink]
`

var connectorYAML = common + "processors:" + batch + `
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [itl_metrics, otlp/sink]
    metrics:
      receivers: [itl_metrics]
      exporters: [otlp/sink]
`

var baseConfigs = []config{
	{
		name:  "passthrough",
		about: "OTLP receiver -> batch -> OTLP exporter",
		yaml:  passthroughYAML,
	},
	{
		// The A/A control: a second pass-through, the same binary and configuration. Its ratio to
		// passthrough is the harness's own noise, the least difference a run can resolve; run
		// -together, it shows what running side by side leaves of the machine's noise.
		name:  "passthrough_twin",
		about: "passthrough again, a second collector of the same configuration: the A/A control, whose ratio to passthrough is what the harness cannot resolve",
		yaml:  passthroughYAML,
	},
	{
		// What receiving and exporting the span contract's annotations costs, with none of our code
		// in the collector. A pipeline that annotates does not receive them (its processor builds
		// them); BenchmarkCarry separates the export, which it pays.
		name:      "annotated",
		figures:   true,
		base:      "reencoded",
		baseAbout: "what receiving and exporting the annotations costs, with no code of ours in either (BenchmarkCarry separates the exporting, the part every annotating pipeline pays)",
		about:     "passthrough, fed the spans as the itl processor annotates them (annotated once in the harness, before the rounds)",
		input:     "annotated",
		yaml:      passthroughYAML,
	},
	{
		// The control for annotated: the same requests, decoded and encoded again by pdata as
		// annotated's are, without the annotations.
		name:  "reencoded",
		about: "passthrough, fed the spans as annotated's are made but not annotated: decoded and encoded again by pdata",
		input: "reencoded",
		yaml:  passthroughYAML,
	},
	{
		name:    "full",
		figures: true,
		about:   "receiver -> itl -> batch -> [itl_metrics, exporter]; itl_metrics -> exporter",
		metrics: true,
		yaml:    fullYAML,
	},
	{
		name:    "processor",
		figures: true,
		about:   "receiver -> itl -> batch -> exporter (full without the connector)",
		yaml: common + "processors:\n  itl:" + batch + `
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl, batch]
      exporters: [otlp/sink]
`,
	},
	{
		// The floor of target (a): the least any implementation of our two components must do on
		// a generation span (bench/floorcol/floor.go says what that is and what it leaves out), so
		// that what it adds to a pass-through bounds from below what they add.
		name:    "floor",
		figures: true,
		floor:   true,
		about:   "receiver -> itl_floor -> batch -> exporter: the floor processor reads each arrival once, puts each gap in a power-of-two histogram and writes the six figures itl writes, selecting no percentile (bench/floorcol): a lower bound on what itl and itl_metrics add",
		yaml:    common + "processors:\n  itl_floor:" + batch + floorService,
	},
	{
		// The floor with the one piece of work the golden figures demand that floor leaves out:
		// the exact gap percentiles, selected as the itl processor selects them.
		name:    "floor_exact",
		figures: true,
		floor:   true,
		about:   "floor, also selecting the exact gap p50, p90 and p99 as itl does (its figures are then itl's): the floor with the work the golden figures require",
		yaml:    common + "processors:\n  itl_floor:\n    exact: true" + batch + floorService,
	},
	{
		// The connector's floor on the spans today's client writes, which carry their figures:
		// reading every arrival and counting every gap, writing nothing. It runs on the figures
		// loads, where the other floors do not.
		name:     "floor_read",
		floor:    true,
		readOnly: true,
		about:    "receiver -> itl_floor (read_only) -> batch -> exporter: reads each arrival once and counts each gap in a power-of-two histogram, writes nothing: the least the itl_metrics connector must do on a span that carries its figures",
		yaml:     common + "processors:\n  itl_floor:\n    read_only: true" + batch + floorService,
	},
	{
		name:    "connector",
		about:   "receiver -> batch -> [itl_metrics, exporter]; itl_metrics -> exporter (full without the processor)",
		metrics: true,
		yaml:    connectorYAML,
	},
	{
		name:     "drop_timeline",
		timeline: "none",
		figures:  true,
		about:    "traces/metrics: receiver -> itl_metrics; traces/store: receiver -> itl (drop_timeline) -> batch -> exporter",
		metrics:  true,
		yaml:     dropTimelineYAML,
	},
	{
		name:       "compact_events",
		timeline:   "compact",
		figures:    true,
		about:      "as drop_timeline, with compact_events instead",
		metrics:    true,
		eventsOnly: true,
		yaml:       compactEventsYAML,
	},
}

// exporterBatching moves a configuration's batching from the batch processor into the exporter
// (exporterhelper's sending_queue::batch, with the batch processor's size and timeout).
func exporterBatching(yaml string) string {
	return withoutBatching(strings.Replace(yaml, "      queue_size: 20000\n", "      queue_size: 20000\n      batch:\n        flush_timeout: 200ms\n        min_size: 2048\n        sizer: items\n", 1))
}

// withoutBatching removes the batch processor from a configuration: from its pipelines, and its
// definition (with the processors: key when it was the only one).
func withoutBatching(yaml string) string {
	y := strings.ReplaceAll(yaml, "      processors: [batch]\n", "")
	y = strings.ReplaceAll(y, ", batch]", "]")
	y = strings.Replace(y, "processors:"+batch, "", 1)
	return strings.Replace(y, batch, "\n", 1)
}

// storeLayout is the pipeline layout of collector/itlprocessor/README.md ("Pipeline: keep per-gap
// metrics, store small spans"): the connector sees the spans before the processor changes them.
const storeLayout = `
service:
  pipelines:
    traces/metrics:
      receivers: [otlp]
      exporters: [itl_metrics]
    traces/store:
      receivers: [otlp]
      processors: [itl, batch]
      exporters: [otlp/sink]
    metrics:
      receivers: [itl_metrics]
      exporters: [otlp/sink]
`

// render fills in a configuration's addresses, the exporter's compression and the connector's
// flush interval; the pprof extension
// is on only when pprofAddr is not empty.
func (c config) render(otlpAddr, sinkAddr, pprofAddr, compression string, flush time.Duration) string {
	y := strings.NewReplacer("{{OTLP}}", otlpAddr, "{{SINK}}", sinkAddr, "{{COMPRESSION}}", compression,
		"{{FLUSH}}", flush.String()).Replace(c.yaml)
	y += "  telemetry:\n    metrics:\n      level: none\n"
	if pprofAddr != "" {
		y = "extensions:\n  pprof:\n    endpoint: " + pprofAddr + "\n" + y + "  extensions: [pprof]\n"
	}
	return y
}

func configByName(name string) (config, bool) {
	for _, c := range configs {
		if c.name == name {
			return c, true
		}
	}
	return config{}, false
}

// collector is a running otelcol-itl process.
type collector struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

func startCollector(bin, dir, yaml, gates string) (*collector, error) {
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "collector.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--config", cfg}
	if gates != "" {
		args = append(args, "--feature-gates="+gates)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	c := &collector{cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() { _ = cmd.Wait(); logf.Close(); close(c.done) }()
	return c, nil
}

// stop interrupts the collector and waits for it to exit (killing it after 30 s); it returns the
// CPU time the process used over its whole life, from its rusage.
func (c *collector) stop() time.Duration {
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	if ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return 0
}

func (c *collector) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// logTail is the end of the collector's log, for error messages.
func (c *collector) logTail() string {
	return tail(c.log, 4000)
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// procCPU reads the CPU time (user + system) a running process has used so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) from the contents of /proc/PID/stat. The
// command name (field 2) is in parentheses and may hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name in %q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name", len(f))
	}
	ut, err1 := strconv.ParseInt(f[14-3], 10, 64)
	st, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q, stime %q", f[14-3], f[15-3])
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// procPeakRSS reads VmHWM, the process's peak resident set size, in bytes.
func procPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusKB(b, "VmHWM")
}

// parseStatusKB reads a "Key:   1234 kB" line of /proc/PID/status, in bytes.
func parseStatusKB(b []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != key {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc status: %s is %q", key, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc status: %s is %q", key, rest)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc status: no %s", key)
}

// loadAvg is the machine's load average over the last minute, from /proc/loadavg.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitTCP(addr string, timeout time.Duration, c *collector) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c.exited() {
			return fmt.Errorf("the collector exited at start:\n%s", c.logTail())
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not listening within %v:\n%s", addr, timeout, c.logTail())
}
