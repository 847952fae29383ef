// Package doccheck keeps the components' READMEs true: every configuration key of a component's
// Config, every instrument of its own telemetry, and every word a test names (metric names,
// reasons), must appear in its README.
package doccheck

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Keys returns every configuration key of cfg (a struct or a pointer to one) as the collector
// reads it: mapstructure tag names, nested ones joined with ".", squashed structs flattened.
func Keys(cfg any) []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			tag, ok := f.Tag.Lookup("mapstructure")
			if !ok || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case strings.Contains(opts, "squash"):
				walk(ft, prefix)
			case ft.Kind() == reflect.Struct:
				walk(ft, prefix+name+".")
			default:
				keys = append(keys, prefix+name)
			}
		}
	}
	walk(reflect.TypeOf(cfg), "")
	return keys
}

// Missing returns the words that do not appear in the file at path, each as `word` (in backquotes,
// as the READMEs write keys and names).
func Missing(path string, words []string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	text := string(b)
	var missing []string
	for _, w := range words {
		if !strings.Contains(text, "`"+w+"`") {
			missing = append(missing, w)
		}
	}
	return missing, nil
}

// Instruments records the name of every instrument a component creates from its MeterProvider,
// so that a test can hold its README to its own telemetry.
type Instruments struct {
	noop.MeterProvider
	mu    sync.Mutex
	names []string
}

// Meter returns a meter that records the names of the instruments created from it.
func (in *Instruments) Meter(string, ...metric.MeterOption) metric.Meter { return meter{in: in} }

// Names returns the names recorded, in the order created.
func (in *Instruments) Names() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.names...)
}

func (in *Instruments) add(name string) {
	in.mu.Lock()
	in.names = append(in.names, name)
	in.mu.Unlock()
}

type meter struct {
	noop.Meter
	in *Instruments
}

func (m meter) Int64Counter(name string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.in.add(name)
	return m.Meter.Int64Counter(name, o...)
}

func (m meter) Int64UpDownCounter(name string, o ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	m.in.add(name)
	return m.Meter.Int64UpDownCounter(name, o...)
}

func (m meter) Int64Gauge(name string, o ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	m.in.add(name)
	return m.Meter.Int64Gauge(name, o...)
}

func (m meter) Int64Histogram(name string, o ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.in.add(name)
	return m.Meter.Int64Histogram(name, o...)
}

func (m meter) Float64Counter(name string, o ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	m.in.add(name)
	return m.Meter.Float64Counter(name, o...)
}

func (m meter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.in.add(name)
	return m.Meter.Float64Histogram(name, o...)
}

func (m meter) Int64ObservableGauge(name string, o ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	m.in.add(name)
	return m.Meter.Int64ObservableGauge(name, o...)
}

func (m meter) Int64ObservableCounter(name string, o ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	m.in.add(name)
	return m.Meter.Int64ObservableCounter(name, o...)
}
