package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otelitl/itl/examples/fakellm/server"
)

// BenchmarkProxy measures what the proxy adds to a stream, side by side with going to fakellm
// directly in the same run: for every chunk, its latency is the time the client's Read returned it
// less the time fakellm's engine produced it. The proxy's addition is the proxied latency less the
// direct one, at the first chunk (TTFT) and at every chunk (each gap then carries the difference
// of two consecutive additions); gap jitter is |client gap - engine gap|. CPU is the process's CPU
// time (user+system) per thousand chunks, proxied less direct. Everything shares one process here;
// BenchmarkProxyProcs gives fakellm, the proxy and the clients a process each.
//
//	go test -run '^$' -bench '^BenchmarkProxy$' -benchtime 3x ./cmd/otelitl-proxy
func BenchmarkProxy(b *testing.B) {
	for _, streams := range []int{1, 200} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			s := newStack(b, benchEngine())
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true}}
			var direct, proxied result
			arrivals := func(id uint64) ([]time.Time, error) { return s.eng.Arrivals(id), nil }
			for b.Loop() {
				cpu0 := cpuTime()
				r := runStreams(client, s.fake.URL, arrivals, streams)
				r.cpu = cpuTime() - cpu0
				direct.add(r)
				cpu0 = cpuTime()
				r = runStreams(client, s.proxy.URL, arrivals, streams)
				r.cpu = cpuTime() - cpu0
				proxied.add(r)
				s.exp.Reset()
			}
			for _, r := range []result{direct, proxied} {
				if r.failed > 0 {
					b.Errorf("%d streams failed: %v", r.failed, r.err)
				}
			}
			d, p := direct.summary(), proxied.summary()
			b.ReportMetric(float64(p.ttft50-d.ttft50)/1e3, "added-ttft-p50-µs")
			b.ReportMetric(float64(p.ttft99-d.ttft99)/1e3, "added-ttft-p99-µs")
			b.ReportMetric(float64(p.lat50-d.lat50)/1e3, "added-chunk-p50-µs")
			b.ReportMetric(float64(p.lat99-d.lat99)/1e3, "added-chunk-p99-µs")
			b.ReportMetric(float64(p.jit99)/1e3, "proxied-gap-jitter-p99-µs")
			b.ReportMetric(float64(d.jit99)/1e3, "direct-gap-jitter-p99-µs")
			b.ReportMetric(float64(p.cpu-d.cpu)/1e6/(float64(p.chunks)/1000), "proxy-cpu-ms/kchunk")
			b.Logf("streams=%d chunks direct %d proxied %d | latency p50/p99 direct %v/%v proxied %v/%v | ttft p50/p99 direct %v/%v proxied %v/%v | gap jitter p99 direct %v proxied %v | cpu direct %v proxied %v",
				streams, d.chunks, p.chunks, d.lat50, d.lat99, p.lat50, p.lat99, d.ttft50, d.ttft99, p.ttft50, p.ttft99, d.jit99, p.jit99, d.cpu, p.cpu)
		})
	}
}

type result struct {
	ttft, lat, jitter []time.Duration
	cpu               time.Duration
	chunks            int
	failed            int   // streams that failed (their chunks are not counted)
	err               error // the first failure
}

func (r *result) add(o result) {
	r.ttft = append(r.ttft, o.ttft...)
	r.lat = append(r.lat, o.lat...)
	r.jitter = append(r.jitter, o.jitter...)
	r.cpu += o.cpu
	r.chunks += o.chunks
	r.failed += o.failed
	if r.err == nil {
		r.err = o.err
	}
}

type summary struct {
	ttft50, ttft99, lat50, lat99, jit99, cpu time.Duration
	chunks                                   int
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func (r *result) summary() summary {
	return summary{pct(r.ttft, .5), pct(r.ttft, .99), pct(r.lat, .5), pct(r.lat, .99), pct(r.jitter, .99), r.cpu, r.chunks}
}

// cpuTime is this process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var contentMark = []byte(`"content":"`)

// runStreams runs n concurrent streams of 60 tokens against base and returns each chunk's latency:
// the time the client's Read returned it less the time fakellm produced it (arrivals), and the
// streams that failed.
func runStreams(c *http.Client, base string, arrivals func(id uint64) ([]time.Time, error), n int) result {
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		res.failed++
		if res.err == nil {
			res.err = err
		}
	}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"model":"fake-gpt","stream":true,"max_tokens":60,"messages":[{"role":"user","content":"hi"}]}`
			resp, err := c.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				fail(err)
				return
			}
			defer resp.Body.Close()
			id, _ := strconv.ParseUint(resp.Header.Get(server.RequestIDHeader), 10, 64)
			var at []time.Time
			var pending []byte
			buf := make([]byte, 32<<10)
			for {
				k, err := resp.Body.Read(buf)
				now := time.Now()
				pending = append(pending, buf[:k]...)
				for {
					i := bytes.Index(pending, []byte("\n\n"))
					if i < 0 {
						break
					}
					ev := pending[:i]
					if j := bytes.Index(ev, contentMark); j >= 0 && j+len(contentMark) < len(ev) && ev[j+len(contentMark)] != '"' {
						at = append(at, now)
					}
					pending = pending[i+2:]
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					fail(fmt.Errorf("reading the stream: %w", err))
					return
				}
			}
			sent, err := arrivals(id)
			if err != nil {
				fail(err)
				return
			}
			if len(sent) != len(at) {
				fail(fmt.Errorf("%d chunks read, fakellm sent %d", len(at), len(sent)))
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range at {
				l := at[i].Sub(sent[i])
				res.lat = append(res.lat, l)
				if i == 0 {
					res.ttft = append(res.ttft, l)
				} else {
					j := at[i].Sub(at[i-1]) - sent[i].Sub(sent[i-1])
					res.jitter = append(res.jitter, max(j, -j))
				}
			}
			res.chunks += len(at)
		}()
	}
	wg.Wait()
	return res
}
