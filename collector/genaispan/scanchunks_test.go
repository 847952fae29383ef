package genaispan

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/itlconv"
)

// TestScanChunksAgrees checks the fast scan against the general one on random spans built to sit
// on either side of every condition of the fast one: for each span scanChunks takes, both must
// find the same name, count, order, gap statistics and offsets; the spans it declines, scanEvents
// reads alone. Both sides must be reached often. With a counter (CountGaps), the fast scan also
// counts the gaps: when it says it counted them all, the counts must be those of the offsets'
// gaps in the counter's buckets.
func TestScanChunksAgrees(t *testing.T) {
	for _, names := range [][]string{itlconv.DefaultChunkEventNames, {"my.chunk", itlconv.ChunkEventName}} {
		t.Run(names[0], func(t *testing.T) { checkScanChunks(t, names, nil) })
	}
	// Boundaries 10 to 140 us apart, about the gaps below, and the stall threshold among them.
	bounds := []float64{10e-6, 20e-6, 50e-6, 100e-6, 140e-6, 150e-6, 151e-6}
	t.Run("counted", func(t *testing.T) { checkScanChunks(t, itlconv.DefaultChunkEventNames, bounds) })
}

func checkScanChunks(t *testing.T, names []string, bounds []float64) {
	rng := rand.New(rand.NewPCG(7, 8))
	const start = int64(1_000_000_000)
	taken, declined, withTokens, counted := 0, 0, 0, 0
	var tab *buckets.Table
	if bounds != nil {
		tab = buckets.New(bounds)
	}
	for range 20000 {
		s := ptrace.NewSpan()
		dur := int64(rng.IntN(2_000_000)) // ns
		end := start + dur
		if rng.IntN(50) == 0 {
			end = start - 1 // ends before it starts
		}
		s.SetStartTimestamp(pcommon.Timestamp(start))
		s.SetEndTimestamp(pcommon.Timestamp(end))
		n := rng.IntN(12)
		ts := start
		for range n {
			ev := s.Events().AppendEmpty()
			name := names[0]
			switch rng.IntN(60) {
			case 0:
				name = names[1]
			case 1:
				name = "other"
			case 2:
				name = itlconv.OpenInferenceFirstTokenEvent
			}
			ev.SetName(name)
			switch rng.IntN(40) {
			case 0:
				ts = start - 1 // before the start
			case 1:
				ts = end + 1 // past the end
			case 2:
				ts = start // on the start
			case 3:
				ts = end // on the end
			case 4:
				ts -= int64(rng.IntN(100_000)) // back in time
			default:
				ts += int64(rng.IntN(200_000))
			}
			ev.SetTimestamp(pcommon.Timestamp(max(ts, 0)))
			switch rng.IntN(30) {
			case 0, 1:
				ev.Attributes().PutInt(string(itlconv.ChunkTokensKey), int64(rng.IntN(4)))
			case 2:
				ev.Attributes().PutStr("note", "x")
			case 3:
				ev.Attributes().PutInt(string(itlconv.ChunkTokensKey), -1) // invalid: the general scan says why
			}
		}
		maxChunks := 10
		d := New(Config{ChunkEventNames: names, MaxChunks: maxChunks, StallThreshold: 150_000})
		if tab != nil {
			d.CountGaps(buckets.NewCounter(tab))
		}
		r := emptyResult(s)
		fast, ok := d.scanChunks(&r, s.Events())
		fastOffs, fastToks := slices.Clone(d.offsets), slices.Clone(d.tokens)
		if !ok {
			declined++
			continue
		}
		taken++
		if fast.counted {
			counted++
			if got, want := d.counter.Counts(), countsOf(tab, d.offsets); !slices.Equal(got, want) {
				t.Fatalf("offsets %v: counted %v, want %v", d.offsets, got, want)
			}
		}
		fast.counted = false // the general scan counts nothing
		want := emptyResult(s)
		slow := d.scanEvents(&want, s.Events(), d.names, s.Events().Len() <= maxChunks)
		if fast != slow || !slices.Equal(fastOffs, d.offsets) || r.firstToken != want.firstToken ||
			(fast.tokens && !slices.Equal(fastToks, d.tokens)) {
			t.Fatalf("span of %d events: fast scan %+v %v %v (first token %d), general %+v %v %v (first token %d)",
				n, fast, fastOffs, fastToks, r.firstToken, slow, d.offsets, d.tokens, want.firstToken)
		}
		if fast.tokens {
			withTokens++
		}
	}
	if taken < 2000 || declined < 2000 || withTokens < 200 || tab != nil && counted < 1000 {
		t.Fatalf("fast scan taken %d times (%d with token counts, %d counted), declined %d: both sides must be reached",
			taken, withTokens, counted, declined)
	}
}

// countsOf counts the gaps between offsets, in the order they came, in tab's buckets: each with
// tab.Search, which buckets' own tests check against a binary search of the boundaries.
func countsOf(tab *buckets.Table, offsets []int64) []uint64 {
	c := make([]uint64, len(tab.Bounds())+1)
	for i := 1; i < len(offsets); i++ {
		c[tab.Search(offsets[i]-offsets[i-1])]++
	}
	return c
}
