package main

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// sinkType names the in-process metrics sink: an exporter that keeps the latest metrics the
// itl_metrics connector flushed, so that the quickstart prints what a backend would receive.
var sinkType = component.MustNewType("quickstart_sink")

type sinkConfig struct{}

// sink holds the latest cumulative snapshot.
type sink struct {
	mu     sync.Mutex
	latest pmetric.Metrics
	n      int
}

func (s *sink) factory() exporter.Factory {
	return exporter.NewFactory(sinkType,
		func() component.Config { return &sinkConfig{} },
		exporter.WithMetrics(func(context.Context, exporter.Settings, component.Config) (exporter.Metrics, error) {
			return s, nil
		}, component.StabilityLevelDevelopment))
}

func (s *sink) Start(context.Context, component.Host) error { return nil }
func (s *sink) Shutdown(context.Context) error              { return nil }
func (s *sink) Capabilities() consumer.Capabilities         { return consumer.Capabilities{} }

func (s *sink) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	cp := pmetric.NewMetrics()
	md.CopyTo(cp)
	s.mu.Lock()
	s.latest, s.n = cp, s.n+1
	s.mu.Unlock()
	return nil
}

// snapshot returns the latest metrics and how many flushes arrived.
func (s *sink) snapshot() (pmetric.Metrics, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest, s.n
}
