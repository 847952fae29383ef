package main

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"time"
)

type profileRun struct {
	load, config, path string
	r                  result
	b                  *breakdown
}

// median of xs (the mean of the middle two for an even count); NaN-free: 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// pairedRatios divides each round's value of a configuration by the same round's value of the
// baseline: rounds run side by side, so the ratio cancels what the machine's load did to that
// round. Rounds missing on either side are skipped.
func pairedRatios(v, base map[int]float64) []float64 {
	var out []float64
	for round, x := range v {
		if b, ok := base[round]; ok && b > 0 {
			out = append(out, x/b)
		}
	}
	sort.Float64s(out)
	return out
}

// ratioText is the median of ratios, sorted, with their range when there are several and, from
// three on, their mean and the half-width of its 95% confidence interval: whether a run resolves
// a difference of a few percent, read at a glance.
func ratioText(rs []float64) string {
	switch len(rs) {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf("%.3f", rs[0])
	case 2:
		return fmt.Sprintf("%.3f (%.3f-%.3f)", median(rs), rs[0], rs[len(rs)-1])
	}
	m, h := meanCI(rs)
	return fmt.Sprintf("%.3f (%.3f-%.3f), mean %.3f ± %.3f", median(rs), rs[0], rs[len(rs)-1], m, h)
}

// tQuantiles are Student's t at 0.975 for 1 to 30 degrees of freedom.
var tQuantiles = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// meanCI is the mean of xs (two or more) and the half-width of its 95% confidence interval
// (Student's t; past 30 degrees of freedom, t at 30, which errs wide).
func meanCI(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := tQuantiles[min(len(xs)-1, len(tQuantiles))-1]
	return mean, t * math.Sqrt(ss/(n-1)/n)
}

// perMillion is CPU seconds per million chunks.
func perMillion(cpu time.Duration, chunks int64) float64 {
	return cpu.Seconds() / (float64(chunks) / 1e6)
}

func formatReport(o options, loads []*load, results []result, profiles []profileRun) string {
	var w strings.Builder
	fmt.Fprintf(&w, "bench-pipeline: otelcol-itl end to end, pass-through against the itl processor and the itl_metrics connector\n")
	how := "configurations interleaved (order rotated each round)"
	if o.together {
		how = "configurations together (-together: in each round, every configuration's collector at the same time, fed the same requests at the same moments)"
	}
	fmt.Fprintf(&w, "%s, %s/%s, %d CPUs, %s; %d rounds, %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), o.rounds, how)
	fmt.Fprintf(&w, "Every configuration: OTLP/gRPC receiver, batch (2048, 200ms), OTLP/gRPC exporter with %s compression and a sending queue, to an OTLP sink in the harness; the connector delta, flushed every %v.\n", o.compression, o.flush)
	fmt.Fprintf(&w, "CPU: the collector's utime+stime from the start of the replay (/proc/PID/stat) to its exit (rusage), stopped %v after the last span arrived (and with a flush interval up to %v, the last metric); the shutdown and its flush of the connector's metrics are included; peak RSS: VmHWM.\n", settle, maxFlushWait)
	fmt.Fprintf(&w, "The machine is shared: \"machine load\" (below) is its 1-minute load average at the end of each replay, against its %d CPUs.\n", runtime.NumCPU())
	fmt.Fprintf(&w, "Medians over rounds; \"vs pass-through\" is the median of the per-round ratios (min-max), and from 3 rounds on their mean ± the half-width of its 95%% confidence interval.\n")
	for _, ld := range loads {
		fmt.Fprintf(&w, "\n### Load %s: %d generations/s x %d chunks (%s) for %d s\n\n", ld.name, o.rate, ld.chunks, ld.encoding, o.seconds)
		fmt.Fprintf(&w, "%d generations, %d chunks, %d gaps, %d stalls; %d OTLP export requests of %d spans, %.1f MB (%.0f B per span), replayed as the same bytes to every configuration",
			ld.spans, ld.chunkCount(), ld.gaps, ld.stalls, len(ld.reqs), o.batch, float64(ld.bytes)/1e6, float64(ld.bytes)/float64(ld.spans))
		if ld.variants != nil {
			fmt.Fprintf(&w, " (annotated: the same requests as the itl processor annotates them, %.0f B per span; reencoded: decoded and encoded again by pdata, %.0f B per span)",
				float64(ld.variantBytes["annotated"])/float64(ld.spans), float64(ld.variantBytes["reencoded"])/float64(ld.spans))
		}
		fmt.Fprintf(&w, "\n\n")
		fmt.Fprintf(&w, "| configuration | CPU s / M chunks | vs pass-through | peak RSS MiB | vs pass-through | spans delivered / sent | gap observations / gaps | metric points | exported B/span | zero loss |\n")
		fmt.Fprintf(&w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		base := byRound(results, ld.name, "passthrough")
		for _, c := range configsFor(o.configs, ld) {
			rs := filter(results, ld.name, c.name)
			if len(rs) == 0 {
				continue
			}
			cpu, rss := byRound(results, ld.name, c.name), map[int]float64{}
			var cpus, rsss, spans, gaps, points, bps []float64
			ok := true
			for _, r := range rs {
				cpus = append(cpus, cpu[r.round])
				rss[r.round] = float64(r.peakRSS)
				rsss = append(rsss, float64(r.peakRSS)/(1<<20))
				spans = append(spans, float64(r.counts.spans))
				gaps = append(gaps, float64(r.counts.gapObs))
				points = append(points, float64(r.counts.points))
				bps = append(bps, float64(r.counts.traceBytes)/float64(max(r.counts.spans, 1)))
				ok = ok && len(r.problems) == 0
			}
			rssBase := map[int]float64{}
			for _, r := range filter(results, ld.name, "passthrough") {
				rssBase[r.round] = float64(r.peakRSS)
			}
			loss := "yes"
			if !ok {
				loss = "**NO** (below)"
			}
			gapText := "-"
			if c.metrics {
				gapText = fmt.Sprintf("%.0f / %d", median(gaps), ld.gaps)
			}
			fmt.Fprintf(&w, "| %s | %.3f | %s | %.0f | %s | %.0f / %d | %s | %.0f | %.0f | %s |\n",
				c.name, median(cpus), ratioText(pairedRatios(cpu, base)), median(rsss), ratioText(pairedRatios(rss, rssBase)),
				median(spans), ld.spans, gapText, median(points), median(bps), loss)
		}
		fmt.Fprintln(&w)
		for _, c := range configsFor(o.configs, ld) {
			v, b := byRound(results, ld.name, c.name), byRound(results, ld.name, c.base)
			if c.base == "" || len(v) == 0 || len(b) == 0 {
				continue
			}
			fmt.Fprintf(&w, "%s against %s, per round: %s: %s\n\n", c.name, c.base, ratioText(pairedRatios(v, b)), c.baseAbout)
		}
		for _, c := range configsFor(o.configs, ld) {
			fmt.Fprintf(&w, "- %s: %s\n", c.name, c.about)
		}
	}

	fmt.Fprintf(&w, "\n### Every run\n\n")
	fmt.Fprintf(&w, "| round | load | configuration | CPU s | CPU s / M chunks | CPU s, whole process | peak RSS MiB | replay s | max lag ms | machine load | spans | gap obs | TTFTs | stalls | points | problems |\n")
	fmt.Fprintf(&w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	row := func(round string, r result) {
		fmt.Fprintf(&w, "| %s | %s | %s | %.2f | %.3f | %.2f | %.0f | %.1f | %d | %.1f | %d | %d | %d | %d | %d | %s |\n",
			round, r.load, r.config, r.cpu.Seconds(), perMillion(r.cpu, r.chunks), r.cpuTotal.Seconds(), float64(r.peakRSS)/(1<<20),
			r.sent.Seconds(), r.maxLag.Milliseconds(), r.loadAvg, r.counts.spans, r.counts.gapObs, r.counts.ttfts, r.counts.stalls, r.counts.points, strings.Join(r.problems, "; "))
	}
	for _, r := range results {
		row(fmt.Sprint(r.round+1), r)
	}
	for _, p := range profiles {
		row("profiled", p.r)
	}

	for _, p := range profiles {
		fmt.Fprintf(&w, "\n### CPU profile: %s on %s\n\n%s (one more run with the pprof extension on; not in the medians)\n", p.config, p.load, p.path)
		p.b.format(&w, 25)
	}
	return w.String()
}

func filter(results []result, load, config string) []result {
	var out []result
	for _, r := range results {
		if r.load == load && r.config == config {
			out = append(out, r)
		}
	}
	return out
}

// byRound is a configuration's CPU seconds per million chunks by round.
func byRound(results []result, load, config string) map[int]float64 {
	m := map[int]float64{}
	for _, r := range filter(results, load, config) {
		m[r.round] = perMillion(r.cpu, r.chunks)
	}
	return m
}
