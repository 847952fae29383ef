// Command fakellm is a simulated inference server that speaks the OpenAI, Anthropic, Gemini and
// Ollama APIs: no GPU, no API key, and a token cadence that moves with the causes it moves with on
// real hardware (batch size, KV-cache length, prefill of new requests, queueing, speculative
// decoding). See package engine for the cost model.
//
//	go run ./examples/fakellm -addr 127.0.0.1:8000
//	curl -N 127.0.0.1:8000/v1/chat/completions -d '{"model":"fake-gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}'
//
// It serves POST /v1/chat/completions (streaming and not), POST /v1/responses, POST /v1/messages
// (Anthropic), POST /v1beta/models/{model}:streamGenerateContent (?alt=sse) and :generateContent
// (Gemini), POST /api/chat and /api/generate (Ollama, NDJSON), and GET /debug/arrivals?id=N, the
// delivery time of every chunk of request N (the number is in the X-Fakellm-Request-Id response
// header; a reply's id, chatcmpl-fake5, resp_fake5, msg_fake5 or Gemini's fake5gemini, is taken
// for request 5 too, and Ollama's replies carry no id), kept for the latest 4096 requests; a
// request it has no record of gets a 404.
//
// Every generation is recorded as a SERVER span (httpitl.NewHandler) whose timeline is when each
// chunk was flushed to the client. The spans are exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, the
// default, or grpc; the exporters read the other OTEL_EXPORTER_OTLP_* variables); without them
// nothing is exported. OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none (in any case) turns
// tracing off whatever endpoint is set; another exporter than otlp or none is refused at start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/internal/otlpenv"
	"github.com/otelitl/itl/otelitl/httpitl"
)

func main() {
	addr, models, cfg := defineFlags(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fakellm: unexpected argument %q: every setting is a flag, such as -addr 127.0.0.1:8000 (-h lists them)\n", flag.Arg(0))
		os.Exit(2)
	}

	names, err := parseModels(*models)
	if err == nil {
		err = run(*addr, names, *cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}

// parseModels splits -models at its commas and trims each name, so that a list written with spaces
// ("fake-gpt, fake-claude") serves fake-claude and not " fake-claude", which no request names. An
// empty list or an empty name (a doubled or trailing comma) is refused: the server would start and
// answer every request with model_not_found.
func parseModels(list string) ([]string, error) {
	const example = "such as -models fake-gpt,fake-claude"
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("-models %q: give at least one model name, %s", list, example)
	}
	names := strings.Split(list, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
		if names[i] == "" {
			return nil, fmt.Errorf("-models %q: name %d of %d is empty: give comma-separated model names, %s", list, i+1, len(names), example)
		}
	}
	return names, nil
}

// defineFlags registers fakellm's flags on fs, each defaulting to engine.DefaultConfig's value,
// and returns where they land. README.md's table of flags is checked against it (readme_test.go).
func defineFlags(fs *flag.FlagSet) (addr, models *string, cfg *engine.Config) {
	c := engine.DefaultConfig()
	cfg = &c
	addr = fs.String("addr", "127.0.0.1:8000", "listen address (loopback by default)")
	models = fs.String("models", strings.Join(server.DefaultModels, ","), "comma-separated model names the server answers for")
	fs.IntVar(&cfg.MaxBatch, "max-batch", cfg.MaxBatch, "most sequences decoding at once; more wait in the queue")
	fs.DurationVar(&cfg.StepBase, "step-base", cfg.StepBase, "fixed cost of one decode step")
	fs.DurationVar(&cfg.StepPerSeq, "step-per-seq", cfg.StepPerSeq, "decode step cost per running sequence")
	fs.DurationVar(&cfg.StepPerKTok, "step-per-ktok", cfg.StepPerKTok, "decode step cost per thousand tokens of KV cache in the batch")
	fs.DurationVar(&cfg.PrefillPerTok, "prefill-per-tok", cfg.PrefillPerTok, "prefill cost per prompt token (stalls the running decodes)")
	fs.IntVar(&cfg.ChunkedPrefill, "chunked-prefill", cfg.ChunkedPrefill, "prefill at most this many prompt tokens per step (0: whole prompts)")
	fs.IntVar(&cfg.SpecTokens, "spec-tokens", cfg.SpecTokens, "tokens per decode step drawn from 1..N (speculative decoding); 1 turns it off")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed, for reproducible runs")
	return addr, models, cfg
}

func run(addr string, models []string, cfg engine.Config) error {
	if err := checkAddr(addr); err != nil {
		return err
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return err // it names the flag
	}
	defer eng.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tp, shutdownTracing, exporting, err := otlpenv.Tracing(ctx, "fakellm", log.Printf)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(sctx); err != nil {
			log.Printf("flushing spans: %v", err)
		}
	}()
	why, _ := otlpenv.Off() // an error there stopped Tracing
	switch {
	case exporting != "":
		log.Printf("exporting SERVER generation spans to %s", exporting)
	case why != "":
		log.Printf("not recording spans: %s turns tracing off", why)
	default:
		log.Print("not exporting spans: set OTEL_EXPORTER_OTLP_ENDPOINT to export SERVER generation spans")
	}
	handler := httpitl.NewHandler(server.New(eng, models), httpitl.WithTracerProvider(tp))
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	// Listen first, so that what is announced is an address that answers, with its port when -addr
	// asked for any (:0).
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w: give another address, such as 127.0.0.1:8001", addr, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	log.Printf("fakellm serving %v on http://%s (max batch %d, seed %d)", models, l.Addr(), cfg.MaxBatch, cfg.Seed)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Print("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkAddr refuses an -addr that is not host:port with the form to give: net.Listen says
// "address 8000: missing port in address" of a port alone, which has one, and the advice after it
// (another address) is for one in use.
// A port beyond 65535 is refused so too: net.Listen says "invalid port", after which the same
// advice would not be the fix.
func checkAddr(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err == nil {
		if n, err := strconv.ParseUint(port, 10, 64); err == nil && n > 65535 {
			return fmt.Errorf("-addr %q: port %s is outside 0 to 65535; give one within, such as 127.0.0.1:8000 (0: any free port, announced at start)", addr, port)
		}
		return nil
	}
	port := "8000"
	if _, err := strconv.Atoi(addr); err == nil {
		port = addr
	}
	return fmt.Errorf("-addr %q: want host:port, such as 127.0.0.1:%s (or :%s for every interface)", addr, port, port)
}
