// Package embed runs an OpenTelemetry Collector inside an example's process: an OTLP receiver on a
// free loopback port, the itl processor and the itl_metrics connector, with in-process sinks that
// keep the latest metrics and the annotated spans, and optionally a Prometheus endpoint.
package embed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/otelitl/itl/collector/itlmetricsconnector"
	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/collector/pwalk"
)

// Options configures the embedded collector.
type Options struct {
	// Serve, when set, adds a Prometheus exporter listening there.
	Serve string
	// Dimensions, when set, replaces the connector's dimensions (for example to break figures down
	// by a load level attribute).
	Dimensions []string
	// KeepSpans keeps every annotated span for Spans.
	KeepSpans bool
	// StallThreshold, when above 0, replaces the processor's and the connector's stall threshold.
	StallThreshold time.Duration
}

// Collector is a running embedded collector.
type Collector struct {
	// Endpoint is the OTLP/gRPC address to export to.
	Endpoint string
	// Serve is the address of the Prometheus endpoint, when Options.Serve asked for one: the
	// port picked when Options.Serve gave port 0.
	Serve   string
	Started time.Time

	col  *otelcol.Collector
	errc chan error
	once sync.Once
	sink *sink
}

var sinkType = component.MustNewType("embed_sink")

type sinkConfig struct{}

// sink keeps the latest cumulative metrics and, when asked, every span.
type sink struct {
	mu        sync.Mutex
	latest    pmetric.Metrics
	flushes   int
	keepSpans bool
	spans     []ptrace.Traces
}

func (s *sink) Start(context.Context, component.Host) error { return nil }
func (s *sink) Shutdown(context.Context) error              { return nil }
func (s *sink) Capabilities() consumer.Capabilities         { return consumer.Capabilities{} }

func (s *sink) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	cp := pmetric.NewMetrics()
	md.CopyTo(cp)
	s.mu.Lock()
	s.latest, s.flushes = cp, s.flushes+1
	s.mu.Unlock()
	return nil
}

func (s *sink) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	if !s.keepSpans {
		return nil
	}
	cp := ptrace.NewTraces()
	td.CopyTo(cp)
	s.mu.Lock()
	s.spans = append(s.spans, cp)
	s.mu.Unlock()
	return nil
}

func (s *sink) factory() exporter.Factory {
	return exporter.NewFactory(sinkType,
		func() component.Config { return &sinkConfig{} },
		exporter.WithMetrics(func(context.Context, exporter.Settings, component.Config) (exporter.Metrics, error) { return s, nil }, component.StabilityLevelDevelopment),
		exporter.WithTraces(func(context.Context, exporter.Settings, component.Config) (exporter.Traces, error) { return s, nil }, component.StabilityLevelDevelopment))
}

// pickPort returns an address on host whose port was free a moment ago. The collector binds it
// later, so another process may take it in between; Start then picks again.
var pickPort = func(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start runs a collector until Stop.
func Start(o Options) (*Collector, error) {
	serve := o.Serve
	if serve != "" {
		if _, _, err := net.SplitHostPort(serve); err != nil {
			return nil, fmt.Errorf("-serve %s: give a host and a port, such as 127.0.0.1:9464 (:9464 for every interface)", serve)
		}
		// Tried here, so that a port in use is one message that says what to do, not also the
		// collector's own log line of a component that failed to start.
		l, err := net.Listen("tcp", serve)
		if err != nil {
			return nil, fmt.Errorf("cannot serve the metrics at %s (%w): give -serve another address, such as 127.0.0.1:9464", serve, err)
		}
		_ = l.Close()
	}
	// The receiver's port, and a Serve port of 0, are picked here and bound by the collector a
	// moment later: a port taken in between fails the start with "address already in use", and
	// only then is another one picked.
	const attempts = 5
	for i := 1; ; i++ {
		endpoint, err := pickPort("127.0.0.1")
		if err != nil {
			return nil, err
		}
		s := serve
		if s != "" {
			if host, port, err := net.SplitHostPort(s); err == nil && port == "0" {
				picked, err := pickPort(host)
				if err != nil {
					return nil, err
				}
				s = picked
			}
		}
		c, err := start(o, endpoint, s)
		if err != nil && errors.Is(err, syscall.EADDRINUSE) && i < attempts {
			continue
		}
		if err == nil {
			if host, port, _ := net.SplitHostPort(c.Serve); host == "" || net.ParseIP(host).IsUnspecified() {
				c.Serve = net.JoinHostPort("127.0.0.1", port) // every interface, this machine's among them: an address to open
			}
		}
		return c, err
	}
}

// start runs a collector whose receiver listens at endpoint and, when serve is set, whose
// Prometheus exporter listens at serve.
func start(o Options, endpoint, serve string) (*Collector, error) {
	c := &Collector{Endpoint: endpoint, Serve: serve, Started: time.Now(), errc: make(chan error, 1), sink: &sink{keepSpans: o.KeepSpans}}

	// spans is the settings the processor and the connectors read spans with.
	spans := ""
	if o.StallThreshold > 0 {
		spans = fmt.Sprintf("\n    stall_threshold: %s", o.StallThreshold)
	}
	dims := spans
	if len(o.Dimensions) > 0 {
		dims += "\n    dimensions:"
		for _, d := range o.Dimensions {
			dims += fmt.Sprintf("\n      - name: %q", d)
		}
	}
	// The sink gets exponential histograms, for fine quantiles in the process. Prometheus' text
	// format carries only explicit buckets, so a second connector with the default (explicit)
	// buckets feeds the Prometheus exporter, which the dashboard's le-based queries need.
	promConnector, promExporter, promTraces, promPipeline := "", "", "", ""
	if serve != "" {
		promConnector = "\n  itl_metrics/prometheus:\n    metrics_flush_interval: 1s" + dims
		promExporter = fmt.Sprintf("\n  prometheus:\n    endpoint: %q\n    enable_open_metrics: true", serve)
		promTraces = ", itl_metrics/prometheus"
		promPipeline = "\n    metrics/prometheus:\n      receivers: [itl_metrics/prometheus]\n      exporters: [prometheus]"
	}
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %q
processors:
  itl:%s
connectors:
  itl_metrics:
    metrics_flush_interval: 1s%s
    histogram:
      exponential:
        max_size: 160%s
exporters:
  embed_sink:%s
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl]
      exporters: [itl_metrics, embed_sink%s]
    metrics:
      receivers: [itl_metrics]
      exporters: [embed_sink]%s
`, endpoint, spans, dims, promConnector, promExporter, promTraces, promPipeline)

	factories := func() (otelcol.Factories, error) {
		var f otelcol.Factories
		var err error
		if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
			return f, err
		}
		if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](itlprocessor.NewFactory()); err != nil {
			return f, err
		}
		if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](itlmetricsconnector.NewFactory()); err != nil {
			return f, err
		}
		f.Telemetry = otelconftelemetry.NewFactory()
		f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](c.sink.factory(), prometheusexporter.NewFactory())
		return f, err
	}
	var err error
	c.col, err = otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "otelitl-example", Version: "0.1.0"},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"yaml:" + cfg},
			ProviderFactories: []confmap.ProviderFactory{yamlprovider.NewFactory()},
		}},
		SkipSettingGRPCLogger: true,
		// The example stops the collector itself, after the last spans reached it: on Ctrl-C the
		// collector must not shut down on its own before the example exported them.
		DisableGracefulShutdown: true,
	})
	if err != nil {
		return nil, err
	}
	go func() { c.errc <- c.col.Run(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for c.col.GetState() != otelcol.StateRunning {
		select {
		case err := <-c.errc:
			return nil, err
		default:
		}
		if time.Now().After(deadline) {
			c.col.Shutdown()
			<-c.errc
			return nil, errors.New("the embedded collector did not start within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c, nil
}

// Stop shuts the collector down; the connector's last flush reaches the sink first.
func (c *Collector) Stop() {
	c.once.Do(func() {
		c.col.Shutdown()
		<-c.errc
	})
}

// Metrics returns the latest metrics the connector flushed, and how many flushes arrived.
func (c *Collector) Metrics() (pmetric.Metrics, int) {
	c.sink.mu.Lock()
	defer c.sink.mu.Unlock()
	return c.sink.latest, c.sink.flushes
}

// Spans returns every annotated span received, when Options.KeepSpans is set.
func (c *Collector) Spans() []ptrace.Span {
	c.sink.mu.Lock()
	defer c.sink.mu.Unlock()
	var out []ptrace.Span
	for _, td := range c.sink.spans {
		pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) { out = append(out, s) })
	}
	return out
}
