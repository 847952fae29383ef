package main

import (
	"strings"
	"testing"
	"time"
)

// TestBurstsVisible runs the example briefly: behind a proxy that flushes every 150 ms the
// client's gaps come in bursts (most under 1 ms, the largest near the flush interval) while the
// server's follow the decode steps; with a proxy that flushes every event both sides agree.
func TestBurstsVisible(t *testing.T) {
	client, srv, err := run(options{streams: 2, tokens: 40, flush: 150 * time.Millisecond, step: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	print(&out, srv, client)
	t.Log("\n" + out.String())
	if client.chunks != 80 || srv.chunks != 80 {
		t.Fatalf("chunks: client %d, server %d; want 80 each", client.chunks, srv.chunks)
	}
	if client.bunched < 0.5 || client.p50 > 1 || client.max < 100 {
		t.Errorf("the client's gaps should be bunched: %+v", client)
	}
	if srv.bunched > 0.2 || srv.p50 < 5 || srv.max > 100 {
		t.Errorf("the server's gaps should follow the decode steps: %+v", srv)
	}

	client, srv, err = run(options{streams: 2, tokens: 30, flush: 0, step: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if client.bunched > 0.2 || client.max > 100 || srv.max > 100 {
		t.Errorf("a proxy that flushes every event keeps the rhythm: client %+v, server %+v", client, srv)
	}
}

// TestOptionsRefused: options that would stream or measure nothing are refused, naming the flag,
// before anything starts.
func TestOptionsRefused(t *testing.T) {
	ok := options{streams: 1, tokens: 2, flush: 0, step: time.Millisecond}
	if err := ok.validate(); err != nil {
		t.Fatalf("%+v refused: %v", ok, err)
	}
	for flag, o := range map[string]options{
		"-streams 0": {streams: 0, tokens: 80, step: time.Millisecond},
		"-tokens 1":  {streams: 1, tokens: 1, step: time.Millisecond},
		"-flush -1s": {streams: 1, tokens: 80, flush: -time.Second, step: time.Millisecond},
		"-step 0s":   {streams: 1, tokens: 80},
	} {
		if _, _, err := run(o); err == nil || !strings.HasPrefix(err.Error(), flag+":") {
			t.Errorf("%+v: error %v, want one starting %q", o, err, flag+":")
		}
	}
}
