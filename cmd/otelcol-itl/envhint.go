package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/internal/urlpass"
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
	docs map[string][]envSource // by document: one read again (a reload) replaces what it held
}

// envSource is a key whose value holds one or more ${env:...} references.
type envSource struct {
	doc  string   // where the key was written: the file's path, or the yaml: URI
	path []string // its keys from the document's root; a list's items are [i]
	raw  string   // the value as written
	vars []envVar // the references, in the order written, those in a default after it
}

// envVar is one reference: ${env:NAME}, ${env:NAME:-default}, ${env:NAME:?message}, or one of them
// without the scheme, which the distribution's default scheme, env, resolves.
type envVar struct {
	name       string
	def        *string // nil: no default
	start, end int     // where the reference stands in the value it was found in
}

// references returns the references of s in the order written, without those inside a default
// (see allVars). A reference escaped as $${...} is text, and $$ a dollar sign, as the collector's
// resolver reads them; a reference to another scheme (${file:...}) is none of env's.
func references(s string) []envVar {
	var out []envVar
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i
		for j < len(s) && s[j] == '$' {
			j++
		}
		// Pairs of dollars are escaped dollars: an odd run's last one may open a reference.
		if (j-i)%2 == 1 && j < len(s) && s[j] == '{' {
			if end := closing(s, j); end > 0 {
				if v, ok := parseReference(s[j+1 : end]); ok {
					v.start, v.end = j-1, end+1
					out = append(out, v)
				}
				i = end
				continue
			}
		}
		i = j - 1
	}
	return out
}

// closing returns the index of the brace that closes the one at s[open], nested ones counted, or
// -1.
func closing(s string, open int) int {
	depth := 0
	for k := open; k < len(s); k++ {
		switch s[k] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

// parseReference reads the inside of ${...}: [env:]NAME, then nothing, :-default or :?message.
func parseReference(in string) (envVar, bool) {
	in = strings.TrimPrefix(in, "env:")
	n := 0
	for n < len(in) && (in[n] == '_' || 'a' <= in[n] && in[n] <= 'z' || 'A' <= in[n] && in[n] <= 'Z' || n > 0 && '0' <= in[n] && in[n] <= '9') {
		n++
	}
	name, rest := in[:n], in[n:]
	switch {
	case name == "":
		return envVar{}, false
	case rest == "", strings.HasPrefix(rest, ":?"):
		return envVar{name: name}, true
	case strings.HasPrefix(rest, ":-"):
		def := rest[2:]
		return envVar{name: name, def: &def}, true
	}
	return envVar{}, false
}

// allVars returns vars and the references in their defaults, depth first.
func allVars(vars []envVar) []envVar {
	var out []envVar
	for _, v := range vars {
		out = append(out, v)
		if v.def != nil {
			out = append(out, allVars(references(*v.def))...)
		}
	}
	return out
}

// expand returns s with its references replaced as the resolver replaces them: a variable's value,
// its default (expanded) when it is unset or blank, and $$ as $.
func expand(s string) string {
	var b strings.Builder
	last := 0
	for _, v := range references(s) {
		b.WriteString(strings.ReplaceAll(s[last:v.start], "$$", "$"))
		val := os.Getenv(v.name)
		if strings.TrimSpace(val) == "" && v.def != nil {
			val = expand(*v.def)
		}
		b.WriteString(val)
		last = v.end
	}
	b.WriteString(strings.ReplaceAll(s[last:], "$$", "$"))
	return b.String()
}

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
			// A file that is not valid YAML is retrieved whole as one string, at no key: the
			// resolver refuses it, and no key of it can be named (explain indexes the path).
			if len(path) == 0 {
				return
			}
			if vars := allVars(references(v)); len(vars) > 0 {
				found = append(found, envSource{doc: doc, path: path, raw: v, vars: vars})
			}
		}
	}
	walk(nil, raw)
	n.sources.mu.Lock()
	if n.sources.docs == nil {
		n.sources.docs = map[string][]envSource{}
	}
	n.sources.docs[doc] = found
	n.sources.mu.Unlock()
	return r, err
}

// secretName matches a variable that holds a secret: an error's explanation does not print its
// value, and a shipped configuration must not give it a default (TestSecretsAndEndpointsAreRequired).
var secretName = regexp.MustCompile(`(?i)TOKEN|SECRET|PASSW|API_KEY|_KEY$|AUTH|CREDENTIAL|COOKIE|LICENSE`)

// explain returns the lines that name the variables behind the keys and values err mentions, or
// "" when it mentions none. A key counts when the error names it and the component (or service
// section) it belongs to; a value when the error prints it whole, and names the key's component as
// the one that failed, if it names one (within). A variable the error already
// names (a missing required one) is left out, and a secret's value is never printed.
func (s *envSources) explain(err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	s.mu.Lock()
	var refs []envSource
	for _, d := range s.docs {
		refs = append(refs, d...)
	}
	s.mu.Unlock()
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].key() < refs[j].key() })
	// A host and a port set apart (the collector's telemetry: host, port) print as one address.
	together := map[string]bool{}
	byKey := map[string]envSource{}
	for _, r := range refs {
		byKey[r.key()] = r
	}
	for _, r := range refs {
		if n := len(r.path); n > 1 && r.path[n-1] == "host" {
			parent := envSource{path: r.path[:n-1]}
			port, ok := byKey[parent.key()+"::port"]
			if ok && !r.secret() && wholeIn(text, expand(r.raw)+":"+expand(port.raw)) {
				together[r.key()], together[port.key()] = true, true
			}
		}
	}
	scopes := failing(text)
	unsigned := strings.Contains(text, uint64Refused)
	// One line for the keys written alike in one document, their variables as they are: gateway.yaml's
	// two receivers both read TLS_CLIENT_CA_FILE, whose line was printed twice, once a key.
	type hint struct{ keys []string }
	var order []string
	hints := map[string]*hint{} // by what follows the keys
	misspelt := invalidKeyNames(text)
	for _, r := range refs {
		if last := r.path[len(r.path)-1]; strings.Contains(text, last+": not a setting") || misspelt[last] {
			continue // a misspelled key: the fix is in the file, whatever its value
		}
		var named []string
		for _, v := range r.vars {
			if strings.Contains(text, v.name) {
				named = nil
				break
			}
			named = append(named, describe(v, r.secret()))
		}
		big := false
		if unsigned {
			_, big = r.beyondInt64()
		}
		byValue := (r.valueIn(text) || together[r.key()]) && r.within(scopes) || big
		if len(named) == 0 || !(r.keyIn(text) || r.sectionIn(text) || byValue) {
			continue
		}
		rest := fmt.Sprintf("%q in %s: %s", r.raw, r.doc, strings.Join(named, "; "))
		h := hints[rest]
		if h == nil {
			h = &hint{}
			hints[rest] = h
			order = append(order, rest)
		}
		if !slices.Contains(h.keys, r.key()) {
			h.keys = append(h.keys, r.key())
		}
	}
	if len(order) == 0 {
		return ""
	}
	var lines []string
	for _, rest := range order {
		verb := " is "
		if keys := hints[rest].keys; len(keys) > 1 {
			verb = " are "
		}
		lines = append(lines, "  "+joinKeys(hints[rest].keys)+verb+rest)
	}
	return "Set from environment variables (change the variable, not the file):\n" + strings.Join(lines, "\n")
}

// uint64Refused is the collector's resolver's error for a value YAML reads as a uint64, a whole
// number beyond int64 (9223372036854775808 to 18446744073709551615): it names no key, and its
// fix, quotes, makes the value a string that the key's decoder then refuses.
const uint64Refused = "unsupported type=uint64"

// beyondInt64 returns r's value, its references expanded, and whether it is a whole number YAML
// reads as a uint64.
func (r envSource) beyondInt64() (string, bool) {
	v := strings.TrimSpace(expand(r.raw))
	n, err := strconv.ParseUint(v, 0, 64)
	return v, err == nil && n > math.MaxInt64
}

// beyondInt64 names, after the resolver's uint64Refused error, the keys whose value caused it, with
// the fix; "" for another error. It knows the values set from environment variables only: the
// shipped configurations take every number an operator changes from one.
func (s *envSources) beyondInt64(err error) string {
	if err == nil || !strings.Contains(err.Error(), uint64Refused) {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for _, d := range s.docs {
		for _, r := range d {
			if v, big := r.beyondInt64(); big {
				lines = append(lines, fmt.Sprintf("%s: %s is beyond the largest whole number the collector reads, %d; give a smaller one", r.key(), v, int64(math.MaxInt64)))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(slices.Compact(lines), "\n")
}

// componentFailed matches the collector's errors that name the component that failed to start
// or to be created: failed to start "otlp" receiver, failed to create "otlp_http" exporter for
// data type "traces", failed to start receiver "otlp", failed to create extension "pprof".
var componentFailed = regexp.MustCompile(`failed to (?:start|create) (?:"([^"]+)" (receiver|exporter|processor|connector|extension)|(receiver|exporter|processor|connector|extension) "([^"]+)")`)

// failing returns the paths of the parts of the configuration text says failed: a component's
// (receivers, otlp), every extension's where the error says only "failed to start extensions",
// the collector's own telemetry's; none when it names none.
func failing(text string) [][]string {
	var out [][]string
	for _, m := range componentFailed.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			out = append(out, []string{m[2] + "s", m[1]})
		} else {
			out = append(out, []string{m[3] + "s", m[4]})
		}
	}
	if strings.Contains(text, "failed to start extensions: ") {
		out = append(out, []string{"extensions"})
	}
	for _, t := range []string{"failed to create meter provider: ", "failed to create tracer provider: ", "failed to create logger: "} {
		if strings.Contains(text, t) {
			out = append(out, []string{"service", "telemetry"})
		}
	}
	return out
}

// within reports whether r's key is in one of scopes, or whether scopes is empty (the error names
// no part). A value found in an error counts only for the part that failed: an agent whose
// OTLP_ENDPOINT holds the address its own receiver cannot bind (the gateway on the same host) has
// the receiver's variable to change, not the exporter's, which merely holds the same address.
func (r envSource) within(scopes [][]string) bool {
	if len(scopes) == 0 {
		return true
	}
	for _, sc := range scopes {
		if len(r.path) >= len(sc) && slices.Equal(r.path[:len(sc)], sc) {
			return true
		}
	}
	return false
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

// describe says what v holds, or which default stands in for it; the value not when secret, nor
// the password of a URL in it.
func describe(v envVar, secret bool) string {
	val, set := os.LookupEnv(v.name)
	switch {
	case strings.TrimSpace(val) == "" && v.def != nil:
		state := "unset"
		if set {
			state = "empty"
		}
		if secret {
			return fmt.Sprintf("%s is %s, so its default applies", v.name, state)
		}
		return fmt.Sprintf("%s is %s, so its default %q applies", v.name, state, urlpass.Redact(*v.def))
	case !set:
		return v.name + " is unset"
	case secret:
		return v.name + " is set (its value is not shown)"
	}
	// A URL's password is hidden, as the error above it hides it: OTLP_HTTP_URL is no secret's
	// name, but https://user:password@host is a secret's value.
	return fmt.Sprintf("%s=%q", v.name, urlpass.Redact(val))
}

// secretKey matches a key whose value may be a secret whatever its variable is called (a header
// such as x-honeycomb-team, an authenticator's setting).
var secretKey = regexp.MustCompile(`(?i)header|auth|token|secret|passw|key|credential|cookie|bearer|api`)

// secret reports whether r's value must not be printed: a variable named as a secret, or a key
// that holds one. A key that names a file (tls's key_file, cert_file) holds a path, not what the
// file holds: the path is printed, since the operator needs it to find the file, and the error
// itself names it.
func (r envSource) secret() bool {
	for _, v := range r.vars {
		if secretName.MatchString(v.name) {
			return true
		}
	}
	for i, k := range r.path {
		if i == len(r.path)-1 && strings.HasSuffix(k, "_file") {
			continue
		}
		if secretKey.MatchString(k) {
			return true
		}
	}
	return false
}

// keyIn reports whether text names the key r sets: every name on its path, as words (connectors,
// itl_metrics and metrics_flush_interval; exporters, otlp_grpc, tls and insecure), so that the
// section, the component and the place within it all count: an error about an http endpoint is
// not about the grpc one beside it, nor one about a receiver about an exporter of the same name.
func (r envSource) keyIn(text string) bool {
	if len(r.path) < 3 {
		return false
	}
	for _, k := range r.path {
		if !strings.HasPrefix(k, "[") && !word(text, k) {
			return false
		}
	}
	return true
}

// sectionIn reports whether text is an error about the section r's key is in, as a whole: the
// section's path named as keyIn names one, its last name followed by ":" or "::config:". configtls
// refuses a cert_file without its key_file as "exporters::otlp_grpc::clientconfig::tls: TLS
// configuration must include both certificate and key", naming neither key; each of the section's
// variables is then a suspect, unless the error names the fields it is about in Go's words, as that
// one does ("(CertFile/CertPem and KeyFile/KeyPem)"): then only the keys of those fields are
// (cert_file, key_file; not ca_file).
func (r envSource) sectionIn(text string) bool {
	n := len(r.path)
	if n < 4 || strings.HasPrefix(r.path[n-1], "[") {
		return false
	}
	section := envSource{path: r.path[:n-1]}
	last := section.path[n-2]
	if !section.keyIn(text) || !(strings.Contains(text, "::"+last+": ") || strings.Contains(text, "::"+last+"::config: ")) {
		return false
	}
	fields := goFields.FindAllStringSubmatch(text, -1)
	if len(fields) == 0 {
		return true
	}
	name := goName(r.path[n-1])
	for _, f := range fields {
		for _, w := range goField.FindAllString(f[1], -1) {
			if w == name {
				return true
			}
		}
	}
	return false
}

// goFields matches a parenthesised list of Go field names in an error ("(CertFile/CertPem and
// KeyFile/KeyPem)"), goField one of them.
var (
	goFields = regexp.MustCompile(`\(((?:[A-Z][A-Za-z0-9]*(?:/| and | or |, )?)+)\)`)
	goField  = regexp.MustCompile(`[A-Z][A-Za-z0-9]*`)
)

// goName is the Go field name a configuration key decodes into by the collector's convention
// (cert_file: CertFile).
func goName(key string) string {
	var b strings.Builder
	for _, part := range strings.Split(key, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// valueIn reports whether text prints the value r resolves to, whole: a default endpoint in a
// bind error. Short values (a port alone, true) are too common to tell apart.
func (r envSource) valueIn(text string) bool {
	val := expand(r.raw)
	if r.secret() || val == "" {
		return false
	}
	if len(val) >= 6 {
		return wholeIn(text, val)
	}
	// A short value counts where Go's net package names it as the address it could not use: a
	// bare port given as a listen address ("listen tcp: address 14317: missing port in address").
	return strings.Contains(text, "address "+val+": ")
}

// wholeIn reports whether text prints val whole: not inside a longer value (127.0.0.1 in
// 127.0.0.1:8889, :4317 in :43170).
func wholeIn(text, val string) bool {
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

// word reports whether text holds w with no letter, digit, underscore, hyphen or slash on either
// side: x-honeycomb-team is not in x-honeycomb-team-v2, nor otlphttp in otlphttp/backup.
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
	return b == '_' || b == '-' || b == '/' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
