// Package suggest finds the word a misspelt one most likely meant, for the errors that refuse a
// configuration key: "stall_treshold: not a setting; did you mean stall_threshold?". The collector
// components' own checks and otelcol-itl's notes on the collector's errors share it, so that a
// misspelling is judged alike wherever it is refused.
package suggest

// Closest returns the one of options that word most likely misspells: the nearest by edit
// distance, if it is within a third of word's length plus one edit (a few typos, not another
// word), the first of equals in options' order. It returns "" when none is that near, or when
// word is itself one of options.
func Closest(word string, options []string) string {
	best, bestDist := "", len(word)/3+2
	for _, o := range options {
		if o == word {
			return ""
		}
		if d := Distance(word, o); d < bestDist {
			best, bestDist = o, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes: the fewest insertions,
// deletions and substitutions of a byte that turn a into b.
func Distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
