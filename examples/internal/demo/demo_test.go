package demo

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/otelitl/itl/examples/internal/export"
)

// TestStartStopsTheCollectorWhenTheExporterFails: the embedded collector started for the exporter
// does not outlive a failed Start.
func TestStartStopsTheCollectorWhenTheExporterFails(t *testing.T) {
	var endpoint string
	_, err := start("test", "", func(e string) (*export.Exporter, error) {
		endpoint = e
		if c, err := net.DialTimeout("tcp", e, time.Second); err != nil {
			t.Errorf("the embedded collector does not listen at %s while the exporter is made: %v", e, err)
		} else {
			c.Close()
		}
		return nil, errors.New("no exporter")
	})
	if err == nil {
		t.Fatal("Start succeeded without an exporter")
	}
	if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
		c.Close()
		t.Errorf("the embedded collector still listens at %s after Start failed", endpoint)
	}
}

// TestCloseAfterFinish: Close, deferred by every example, is harmless after Finish.
func TestCloseAfterFinish(t *testing.T) {
	tel, err := Start("test")
	if err != nil {
		t.Fatal(err)
	}
	if err := tel.Finish(io.Discard); err != nil {
		t.Fatal(err)
	}
	tel.Close()
}

// TestHostPort: the hint for a server that is not there tells fakellm to listen where the example
// looked for it.
func TestHostPort(t *testing.T) {
	for base, want := range map[string]string{
		"http://127.0.0.1:8009/v1": "127.0.0.1:8009",
		"http://localhost":         "localhost:80",
		"https://[::1]/v1":         "[::1]:443",
		"::not a url":              "127.0.0.1:8000",
	} {
		if got := hostPort(base); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", base, got, want)
		}
	}
}
