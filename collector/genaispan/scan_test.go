package genaispan

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestKeyOf checks that every field names a distinct attribute, so that fieldOf finds each.
func TestKeyOf(t *testing.T) {
	for f, k := range keyOf {
		if k == "" {
			t.Errorf("field %d has no key", f)
		} else if got := fieldOf(k); got != field(f) {
			t.Errorf("fieldOf(%q) = %d, want %d (two fields share the key?)", k, got, f)
		}
	}
	for _, k := range []string{"", "http.route", "gen_ai", "gen_ai.operation.nam", "gen_ai.request.streaM",
		"gen_ai.operation.namE", "gen_ai.request.modeL", "x", strings.Repeat("gen_ai.", 20)} {
		if got := fieldOf(k); got != numFields {
			t.Errorf("fieldOf(%q) = %d, want none", k, got)
		}
	}
}

// TestFieldOfNearKeys checks fieldOf on every key with one byte changed, at every position: each such
// key lands in the slot of a key it is not (or of none), and must be told apart by its comparison.
func TestFieldOfNearKeys(t *testing.T) {
	fields := map[string]field{}
	for f, k := range keyOf {
		fields[k] = field(f)
	}
	for _, k := range keyOf {
		for p := range len(k) {
			for _, b := range []byte{0, '.', '_', 'a', 'e', 'n', 's', 't', 0xff, k[p] + 1} {
				near := []byte(k)
				near[p] = b
				want, ok := fields[string(near)]
				if !ok {
					want = numFields
				}
				if got := fieldOf(string(near)); got != want {
					t.Fatalf("fieldOf(%q) = %d, want %d", near, got, want)
				}
			}
		}
	}
}

// TestAttr checks the fields kept for Decoder.Attr: they are none of the reader's own (a span
// with only them and no events takes Read's shortcut, as an HTTP client span with server.address
// must), and Attr returns what the attributes' Get does, present or not.
func TestAttr(t *testing.T) {
	for f := range numFields {
		if reader := readerFields&(1<<f) != 0; reader != (f < fServerAddress) {
			t.Errorf("field %q: among the reader's own %v", keyOf[f], reader)
		}
	}
	d := New(Config{})
	span := ptrace.NewSpan()
	span.Attributes().PutStr("server.address", "api.example.com")
	span.Attributes().PutStr("http.request.method", "POST")
	d.Read(span, false)
	if d.fields.has&readerFields != 0 {
		t.Fatalf("an HTTP span's fields %b include the reader's", d.fields.has)
	}
	for _, key := range []string{"server.address", "service.name", "gen_ai.response.model"} {
		a, ok := AttrOf(key)
		if !ok {
			t.Fatalf("AttrOf(%q): not found", key)
		}
		got, found := d.Attr(a)
		want, wantFound := span.Attributes().Get(key)
		if found != wantFound || found && got.AsString() != want.AsString() {
			t.Errorf("Attr(%q) = %v, %v; Get gives %v, %v", key, got, found, want, wantFound)
		}
	}
	if _, ok := AttrOf("http.request.method"); ok {
		t.Error("AttrOf found a key the reader does not look for")
	}
}
