package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0},
		{"stall_treshold", "stall_threshold", 1}, // an insertion
		{"max_chunk", "max_chunks", 1},
		{"kitten", "sitting", 3}, // two substitutions and an insertion
		{"max_recv_msg_sise_mib", "max_recv_msg_size_mib", 1},
		{"ab", "ba", 2}, // no transpositions: two substitutions
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	opts := []string{"endpoint", "max_recv_msg_size_mib", "max_concurrent_streams", "read_buffer_size", "write_buffer_size"}
	for _, c := range []struct{ word, want string }{
		{"max_recv_msg_sise_mib", "max_recv_msg_size_mib"},
		{"endpont", "endpoint"},
		{"read_bufer_size", "read_buffer_size"},
		{"write_buffer_sizes", "write_buffer_size"},
		{"timeout", ""},     // nothing near
		{"endpoint", ""},    // a setting: nothing to suggest
		{"x", ""},           // too short to guess from
		{"buffer_size", ""}, // 5 edits from either: another word, not a typo
	} {
		if got := Closest(c.word, opts); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := Closest("ab", []string{"ax", "ay"}); got != "ax" {
		t.Errorf("Closest among equals = %q, want the first, ax", got)
	}
}
