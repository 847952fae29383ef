package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/confmap"
)

// envSources remembers which keys of the configuration files take their values from environment
// variables, so that an error about a key, or about a value, can name the variable that set it.
// The collector's errors name the key (metrics_flush_interval: 15 has no unit), or print the value
// (listen tcp 127.0.0.1:8889: address already in use), never the ${env:...} reference the value
// came from, so that an operator who set ITL_FLUSH_INTERVAL=15 is left to search the file for the
// key. The shipped configurations take every setting an operator changes from a variable.
//
// It wraps the providers that read configuration documents (file:, yaml:) and reads each
// document as they return it, before the resolver expands its references.
type envSources struct {
	mu   sync.Mutex
	refs []envSource
}

// envSource is a key whose value holds one or more ${env:...} references.
type envSource struct {
	doc  string   // where the key was written: the file's path, or the yaml: URI
	path []string // its keys from the document's root; a list's items are [i]
	raw  string   // the value as written
	vars []envVar // the references, in the order written
}

type envVar struct {
	name string
	def  *string // nil: no default
}

// envReference matches ${env:NAME}, ${env:NAME:-default} and ${env:NAME:?message}, and ${NAME}
// in their forms without a scheme, which the distribution's default scheme, env, resolves. A
// reference escaped as $${...} is text.
var envReference = regexp.MustCompile(`(^|[^$])\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(:[-?][^}]*)?\}`)

// wrap returns f, whose providers note the references of every document they retrieve.
func (s *envSources) wrap(f confmap.ProviderFactory) confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(ps confmap.ProviderSettings) confmap.Provider {
		return &noting{Provider: f.Create(ps), sources: s}
	})
}

type noting struct {
	confmap.Provider
	sources *envSources
}

func (n *noting) Retrieve(ctx context.Context, uri string, w confmap.WatcherFunc) (*confmap.Retrieved, error) {
	r, err := n.Provider.Retrieve(ctx, uri, w)
	if err != nil || r == nil {
		return r, err
	}
	raw, rerr := r.AsRaw()
	if rerr != nil {
		return r, err // the resolver reports it
	}
	doc := strings.TrimPrefix(uri, "file:")
	if strings.HasPrefix(uri, "yaml:") {
		doc = "the yaml: configuration given on the command line"
	}
	var found []envSource
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(append(path[:len(path):len(path)], k), x)
			}
		case []any:
			for i, x := range v {
				walk(append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]"), x)
			}
		case string:
			var vars []envVar
			for _, m := range envReference.FindAllStringSubmatch(v, -1) {
				ev := envVar{name: m[2]}
				if strings.HasPrefix(m[3], ":-") {
					def := m[3][2:]
					ev.def = &def
				}
				vars = append(vars, ev)
			}
			if len(vars) > 0 {
				found = append(found, envSource{doc: doc, path: path, raw: v, vars: vars})
			}
		}
	}
	walk(nil, raw)
	n.sources.mu.Lock()
	n.sources.refs = append(n.sources.refs, found...)
	n.sources.mu.Unlock()
	return r, err
}

// secretName matches a variable that holds a secret: an error's explanation does not print its
// value, and a shipped configuration must not give it a default (TestSecretsAndEndpointsAreRequired).
var secretName = regexp.MustCompile(`(?i)TOKEN|SECRET|PASSW|API_KEY|_KEY$|AUTH|CREDENTIAL|COOKIE|LICENSE`)

// explain returns the lines that name the variables behind the keys and values err mentions, or
// "" when it mentions none. A key counts when the error names it and the component (or service
// section) it belongs to; a value when the error prints it whole. A variable the error already
// names (a missing required one) is left out, and a secret's value is never printed.
func (s *envSources) explain(err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	s.mu.Lock()
	refs := append([]envSource(nil), s.refs...)
	s.mu.Unlock()
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].key() < refs[j].key() })
	var lines []string
	seen := map[string]bool{}
	for _, r := range refs {
		var named []string
		for _, v := range r.vars {
			if strings.Contains(text, v.name) {
				named = nil
				break
			}
			named = append(named, describe(v))
		}
		if len(named) == 0 || !(r.keyIn(text) || r.valueIn(text)) {
			continue
		}
		line := fmt.Sprintf("  %s is %q in %s: %s", r.key(), r.raw, r.doc, strings.Join(named, "; "))
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Set from environment variables (change the variable, not the file):\n" + strings.Join(lines, "\n")
}

// key writes r's path as the collector's errors do: readers[0]::pull, not readers::[0]::pull.
func (r envSource) key() string {
	var b strings.Builder
	for i, k := range r.path {
		if i > 0 && !strings.HasPrefix(k, "[") {
			b.WriteString("::")
		}
		b.WriteString(k)
	}
	return b.String()
}

// describe says what v holds, or which default stands in for it.
func describe(v envVar) string {
	val, set := os.LookupEnv(v.name)
	switch {
	case strings.TrimSpace(val) == "" && v.def != nil:
		state := "unset"
		if set {
			state = "empty"
		}
		return fmt.Sprintf("%s is %s, so its default %q applies", v.name, state, *v.def)
	case !set:
		return v.name + " is unset"
	case secretName.MatchString(v.name):
		return v.name + " is set (its value is not shown)"
	}
	return fmt.Sprintf("%s=%q", v.name, val)
}

// keyIn reports whether text names the key r sets: every name on its path below the root, as
// words (itl_metrics and metrics_flush_interval; otlp_grpc, tls and insecure), so that the
// component it is under and the section within it count: an error about an http endpoint is not
// about the grpc one beside it.
func (r envSource) keyIn(text string) bool {
	if len(r.path) < 3 {
		return false
	}
	named := 0
	for _, k := range r.path[1:] {
		if strings.HasPrefix(k, "[") {
			continue
		}
		if !word(text, k) {
			return false
		}
		named++
	}
	return named >= 2
}

// valueIn reports whether text prints the value r resolves to, whole: a default endpoint in a
// bind error. Short values (a port alone, true) are too common to tell apart.
func (r envSource) valueIn(text string) bool {
	val := envReference.ReplaceAllStringFunc(r.raw, func(m string) string {
		sub := envReference.FindStringSubmatch(m)
		v := os.Getenv(sub[2])
		if strings.TrimSpace(v) == "" && strings.HasPrefix(sub[3], ":-") {
			v = sub[3][2:]
		}
		return sub[1] + v
	})
	if len(val) < 6 || secretIn(r) {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], val)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(val)
		before := start == 0 || strings.ContainsRune(" '\"(=", rune(text[start-1]))
		after := end == len(text) || strings.ContainsRune(" '\"),;\n", rune(text[end])) ||
			strings.HasPrefix(text[end:], ": ")
		if before && after {
			return true
		}
		i = start + 1
	}
}

func secretIn(r envSource) bool {
	for _, v := range r.vars {
		if secretName.MatchString(v.name) {
			return true
		}
	}
	return false
}

// word reports whether text holds w with no letter, digit or underscore on either side.
func word(text, w string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if (start == 0 || !wordByte(text[start-1])) && (end == len(text) || !wordByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
