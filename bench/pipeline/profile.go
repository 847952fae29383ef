package main

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// A stage of the pipeline a CPU sample is charged to: the innermost frame of its stack (leaf
// first) that matches one of the rules, in this order. Our own helper packages (genaispan,
// timeline, pwalk) match no rule, so their time goes to the component that called them; the
// allocations and GC assists a stage causes are charged to it too. Only background GC work, which
// no stack can attribute, is a stage of its own.
var stages = []struct {
	name  string
	match func(fn string) bool
}{
	{"ours: itl processor", contains("/collector/itlprocessor.")},
	{"ours: itl_metrics connector", contains("/collector/itlmetricsconnector.")},
	{"OTLP decode (receiver, pdata unmarshal)", func(fn string) bool {
		return strings.HasPrefix(fn, "go.opentelemetry.io/collector/pdata/") && strings.Contains(fn, "Unmarshal")
	}},
	{"OTLP encode (exporter, pdata marshal/size)", func(fn string) bool {
		return strings.HasPrefix(fn, "go.opentelemetry.io/collector/pdata/") && (strings.Contains(fn, "Marshal") || strings.Contains(fn, "SizeProto"))
	}},
	{"fanout copy between pipelines", contains("go.opentelemetry.io/collector/internal/fanoutconsumer.")},
	{"batch processor", contains("go.opentelemetry.io/collector/processor/batchprocessor.")},
	{"exporter (queue, send)", contains("go.opentelemetry.io/collector/exporter/")},
	{"receiver (otlpreceiver)", contains("go.opentelemetry.io/collector/receiver/")},
	{"gzip compression (exporter)", func(fn string) bool {
		return strings.HasPrefix(fn, "compress/flate.") || strings.HasPrefix(fn, "compress/gzip.")
	}},
	{grpcStage, func(fn string) bool {
		return strings.HasPrefix(fn, "google.golang.org/grpc") || strings.HasPrefix(fn, "golang.org/x/net/http2") ||
			strings.HasPrefix(fn, "syscall.") || strings.HasPrefix(fn, "internal/poll.") || strings.HasPrefix(fn, "net.")
	}},
	{"GC (background) and scheduler", func(fn string) bool {
		return fn == "runtime.gcBgMarkWorker" || fn == "runtime.bgsweep" || fn == "runtime.bgscavenge" || fn == "runtime.schedule" || fn == "runtime.findRunnable"
	}},
}

const grpcStage = "gRPC, HTTP/2 and network"

func contains(s string) func(string) bool {
	return func(fn string) bool { return strings.Contains(fn, s) }
}

// The frames that tell, further up a gRPC stack, which side it serves: the receiver's server or
// the exporter's client.
var (
	serverSide = []string{"http2Server", "NewServerTransport", "grpc.(*Server)", "grpc.(*serverStream)"}
	clientSide = []string{"http2Client", "grpc.(*ClientConn)", "grpc.(*clientStream)", "grpc.invoke", "grpc.newClientStream"}
)

// stageOf returns the stage of a stack, given leaf first. gRPC and network work is split into the
// receiver's side and the exporter's by the frames above it.
func stageOf(stack []string) string {
	for i, fn := range stack {
		for _, st := range stages {
			if !st.match(fn) {
				continue
			}
			if st.name != grpcStage {
				return st.name
			}
			for _, up := range stack[i:] {
				for _, m := range serverSide {
					if strings.Contains(up, m) {
						return grpcStage + ": receiver side"
					}
				}
				for _, m := range clientSide {
					if strings.Contains(up, m) {
						return grpcStage + ": exporter side"
					}
				}
			}
			return grpcStage + ": side unknown"
		}
	}
	return "other"
}

// share is a named part of a profile's CPU time.
type share struct {
	name string
	ns   int64
}

// breakdown is what a CPU profile says: the total, the stages, and the functions (flat and
// cumulative), ours apart.
type breakdown struct {
	total          int64
	samples        int
	duration       time.Duration
	stages         []share
	flat, cum      []share
	oursFlat, ours []share // our functions (github.com/otelitl/), flat and cumulative
	oursTotal      int64   // samples with one of our functions on the stack
}

// readProfile reads CPU profiles, merged into one when there are several (runs of the same
// configuration: more samples, less sampling noise).
func readProfile(paths ...string) (*breakdown, error) {
	var ps []*profile.Profile
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ps = append(ps, p)
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, err
	}
	path := strings.Join(paths, ", ")
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return nil, fmt.Errorf("%s is not a CPU profile", path)
	}
	si := -1
	for i, st := range p.SampleType {
		if st.Type == "samples" {
			si = i
		}
	}
	b := &breakdown{duration: time.Duration(p.DurationNanos)}
	stage, flat, cum, oursCum := map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		b.total += v
		if si >= 0 {
			b.samples += int(s.Value[si])
		} else {
			b.samples++
		}
		var stack []string // leaf first, inlined frames included
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil {
					stack = append(stack, ln.Function.Name)
				}
			}
		}
		stage[stageOf(stack)] += v
		if len(stack) > 0 {
			flat[stack[0]] += v
		}
		seen := map[string]bool{}
		ours := false
		for _, fn := range stack {
			if seen[fn] {
				continue
			}
			seen[fn] = true
			cum[fn] += v
			if strings.HasPrefix(fn, "github.com/otelitl/") {
				oursCum[fn] += v
				ours = true
			}
		}
		if ours {
			b.oursTotal += v
		}
	}
	b.stages = sorted(stage)
	b.flat = sorted(flat)
	b.cum = sorted(cum)
	b.ours = sorted(oursCum)
	for _, s := range b.flat {
		if strings.HasPrefix(s.name, "github.com/otelitl/") {
			b.oursFlat = append(b.oursFlat, s)
		}
	}
	return b, nil
}

func sorted(m map[string]int64) []share {
	out := make([]share, 0, len(m))
	for k, v := range m {
		out = append(out, share{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ns != out[j].ns {
			return out[i].ns > out[j].ns
		}
		return out[i].name < out[j].name
	})
	return out
}

// format writes the breakdown as Markdown tables.
func (b *breakdown) format(w *strings.Builder, top int) {
	pct := func(v int64) string { return fmt.Sprintf("%.1f%%", 100*float64(v)/float64(b.total)) }
	fmt.Fprintf(w, "%.2f CPU s sampled over %v (%.2f cores busy), %d samples: a 10%% share is known to ±%.1f points (95%%, sampling alone)\n\n",
		float64(b.total)/1e9, b.duration.Round(time.Second), float64(b.total)/float64(b.duration), b.samples, 196*math.Sqrt(0.09/float64(max(b.samples, 1))))
	fmt.Fprintf(w, "| stage (innermost matching frame) | CPU share |\n| --- | --- |\n")
	for _, s := range b.stages {
		fmt.Fprintf(w, "| %s | %s |\n", s.name, pct(s.ns))
	}
	var ours int64
	for _, s := range b.stages {
		if strings.HasPrefix(s.name, "ours: ") {
			ours += s.ns
		}
	}
	fmt.Fprintf(w, "\nOur components (the two \"ours\" stages): %s of this configuration's CPU, i.e. +%.1f%% over the rest of the pipeline; samples with any github.com/otelitl/ function on the stack: %s\n\n",
		pct(ours), 100*float64(ours)/float64(max(b.total-ours, 1)), pct(b.oursTotal))
	list := func(title string, l []share, n int) {
		fmt.Fprintf(w, "| %s | share |\n| --- | --- |\n", title)
		for i, s := range l {
			if i == n {
				break
			}
			fmt.Fprintf(w, "| `%s` | %s |\n", shortName(s.name), pct(s.ns))
		}
		fmt.Fprintln(w)
	}
	list("top functions, flat", b.flat, top)
	list("top functions, cumulative", b.cum, top)
	list("our functions, cumulative", b.ours, top)
	list("our functions, flat", b.oursFlat, top)
}

// shortName cuts the directories off a function's package path: the path ends at the last '/'
// before the first '(' or '[' (which open receivers and type arguments, whose own paths stay).
func shortName(fn string) string {
	end := len(fn)
	if i := strings.IndexAny(fn, "(["); i >= 0 {
		end = i
	}
	if slash := strings.LastIndexByte(fn[:end], '/'); slash >= 0 {
		return fn[slash+1:]
	}
	return fn
}
