// Command buffering shows what a buffering proxy does to a stream, and why the server's own
// timeline matters: fakellm streams behind a reverse proxy that flushes only every -flush (as a
// proxy with response buffering on does), and the same generations are recorded twice with httpitl
// — the SERVER spans (httpitl.NewHandler around fakellm: when each chunk left the server) and the
// CLIENT spans (httpitl.NewTransport: when each chunk reached the application). The server's gaps
// stay smooth; the client's are bunched into bursts, one per flush of the proxy.
//
//	go run ./examples/buffering
//	go run ./examples/buffering -flush 0   # a proxy that flushes every event: both sides agree
//
// Everything runs in one process and the spans go to in-memory exporters; the figures printed
// are read from the spans' chunk events.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/httpitl"
)

type options struct {
	streams, tokens int
	flush, step     time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.streams, "streams", 4, "concurrent streams")
	flag.IntVar(&o.tokens, "tokens", 80, "tokens per reply")
	flag.DurationVar(&o.flush, "flush", 300*time.Millisecond, "the buffering proxy flushes every this long (0: after every write, as a streaming proxy does)")
	flag.DurationVar(&o.step, "step", 15*time.Millisecond, "fakellm's decode step")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "buffering: unexpected argument %q: every setting is a flag, such as -streams 4 (-h lists them)\n", flag.Arg(0))
		os.Exit(2)
	}
	client, srv, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "buffering:", err)
		os.Exit(1)
	}
	streams := "streams"
	if o.streams == 1 {
		streams = "stream"
	}
	flushes := fmt.Sprintf("every %v", o.flush)
	if o.flush == 0 {
		flushes = "after every write"
	}
	fmt.Printf("%d %s of %d tokens; fakellm decode step %v; the proxy flushes %s\n\n", o.streams, streams, o.tokens, o.step, flushes)
	print(os.Stdout, srv, client)
}

// figures sums up the gaps between chunks of a set of spans, in milliseconds.
type figures struct {
	chunks, gaps  int
	p50, p99, max float64
	stalls        int     // gaps above itlconv.DefaultStallThreshold
	bunched       float64 // share of gaps under 1 ms: chunks that arrived in the same burst
}

func measure(spans tracetest.SpanStubs, kind trace.SpanKind) figures {
	var gaps []float64
	var f figures
	for _, s := range spans {
		if s.SpanKind != kind {
			continue
		}
		var prev time.Time
		for i, ev := range s.Events {
			if ev.Name != itlconv.ChunkEventName {
				continue
			}
			f.chunks++
			if i > 0 {
				gaps = append(gaps, float64(ev.Time.Sub(prev))/float64(time.Millisecond))
			}
			prev = ev.Time
		}
	}
	if len(gaps) == 0 {
		return f
	}
	slices.Sort(gaps)
	at := func(p float64) float64 { return gaps[min(len(gaps)-1, int(p*float64(len(gaps))))] }
	f.gaps, f.p50, f.p99, f.max = len(gaps), at(.5), at(.99), gaps[len(gaps)-1]
	bunched := 0
	for _, g := range gaps {
		if g > float64(itlconv.DefaultStallThreshold)/float64(time.Millisecond) {
			f.stalls++
		}
		if g < 1 {
			bunched++
		}
	}
	f.bunched = float64(bunched) / float64(len(gaps))
	return f
}

func print(w io.Writer, srv, client figures) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\tchunks\tgap p50 ms\tgap p99 ms\tmax gap ms\tstalls >250ms\tgaps <1ms\t")
	for _, r := range []struct {
		name string
		f    figures
	}{{"server (flushed by fakellm)", srv}, {"client (read by the app)", client}} {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%d\t%.0f%%\t\n", r.name, r.f.chunks, r.f.p50, r.f.p99, r.f.max, r.f.stalls, 100*r.f.bunched)
	}
	_ = tw.Flush()
}

// bufferingProxy forwards requests to upstream and copies each response into the server's write
// buffer, flushing it to the client only every `every` (and whenever the 4 KiB buffer fills), as a
// reverse proxy with response buffering does. every <= 0 flushes after every write. (Go's
// httputil.ReverseProxy cannot show this: it flushes text/event-stream responses at once,
// whatever its FlushInterval.)
func bufferingProxy(upstream string, every time.Duration) http.Handler {
	tr := &http.Transport{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		res, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		fl := w.(http.Flusher)
		var mu sync.Mutex
		if every > 0 {
			tick := time.NewTicker(every)
			defer tick.Stop()
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						mu.Lock()
						fl.Flush()
						mu.Unlock()
					}
				}
			}()
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := res.Body.Read(buf)
			mu.Lock()
			_, werr := w.Write(buf[:n])
			if every <= 0 {
				fl.Flush()
			}
			mu.Unlock()
			if err != nil || werr != nil {
				return
			}
		}
	})
}

// validate refuses options that would stream nothing, or measure nothing: a table of zeros
// looks like a result.
func (o options) validate() error {
	switch {
	case o.streams < 1:
		return fmt.Errorf("-streams %d: stream at least 1 reply", o.streams)
	case o.tokens < 2:
		return fmt.Errorf("-tokens %d: a reply needs at least 2 tokens to have a gap between chunks", o.tokens)
	case o.flush < 0:
		return fmt.Errorf("-flush %v: give 0 (flush after every write) or a positive interval", o.flush)
	case o.step <= 0:
		return fmt.Errorf("-step %v: fakellm's decode step must be positive, such as 15ms", o.step)
	}
	return nil
}

// run streams o.streams chat completions from fakellm through the buffering proxy and returns the
// client's and the server's figures.
func run(o options) (client, srv figures, err error) {
	if err := o.validate(); err != nil {
		return client, srv, err
	}
	cfg := engine.DefaultConfig()
	cfg.StepBase = o.step
	eng, err := engine.New(cfg)
	if err != nil {
		return client, srv, err
	}
	defer eng.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	// fakellm with the middleware: SERVER spans.
	fake := httptest.NewServer(httpitl.NewHandler(server.New(eng, []string{"fake-gpt"}), httpitl.WithTracerProvider(tp)))
	defer fake.Close()
	// The buffering proxy.
	proxy := httptest.NewServer(bufferingProxy(fake.URL, o.flush))
	defer proxy.Close()
	// The application: CLIENT spans.
	hc := &http.Client{Transport: httpitl.NewTransport(&http.Transport{}, httpitl.WithTracerProvider(tp))}

	var wg sync.WaitGroup
	errs := make(chan error, o.streams)
	for range o.streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"model":"fake-gpt","stream":true,"max_tokens":%d,"messages":[{"role":"user","content":"hi"}]}`, o.tokens)
			res, err := hc.Post(proxy.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			if _, err := io.Copy(io.Discard, res.Body); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return client, srv, err
	}
	// The SERVER spans end when fakellm's handlers return, just after the clients' last read.
	deadline := time.Now().Add(5 * time.Second)
	for len(exp.GetSpans()) < 2*o.streams && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	spans := exp.GetSpans()
	return measure(spans, trace.SpanKindClient), measure(spans, trace.SpanKindServer), nil
}
