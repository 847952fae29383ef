package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/otelitl/itl/internal/urlpass"
)

// protocol is one API family the proxy forwards, with the flag and environment variable that set
// its upstream.
type protocol struct {
	name    string // flag name
	env     string
	title   string
	example string
	// version is the prefix the clients' own paths begin with, which the proxy appends to the
	// upstream base URL as it is, and versions matches every such prefix at the end of a path: an
	// upstream that ends in one (the base URL as the SDKs take it, https://api.openai.com/v1)
	// would get it twice, /v1/v1/chat/completions, and answer 404. Paths are case-sensitive, but
	// no API serves /V1 beside /v1: it is the same mistake.
	version    string
	versions   *regexp.Regexp
	clientPath string // one such path, for the error
}

var protocols = []protocol{
	{"openai", "OTELITL_PROXY_OPENAI", "OpenAI and OpenAI-compatible", "https://api.openai.com", "/v1", regexp.MustCompile(`(?i)/v1$`), "/v1/chat/completions"},
	{"anthropic", "OTELITL_PROXY_ANTHROPIC", "Anthropic", "https://api.anthropic.com", "/v1", regexp.MustCompile(`(?i)/v1$`), "/v1/messages"},
	// Gemini methods are routed whatever their version: /v1/models/m:generateContent, Vertex AI's
	// /v1beta1/projects/..., and versions to come (/v2alpha).
	{"gemini", "OTELITL_PROXY_GEMINI", "Gemini", "https://generativelanguage.googleapis.com", "/v1beta", regexp.MustCompile(`(?i)/v[0-9]+((alpha|beta)[0-9]*)?$`), "/v1beta/models/MODEL:streamGenerateContent"},
	{"ollama", "OTELITL_PROXY_OLLAMA", "Ollama", "http://127.0.0.1:11434", "/api", regexp.MustCompile(`(?i)/api$`), "/api/chat"},
}

// endpoint matches, at the end of an upstream's path, the path of one of the APIs' endpoints, with
// the version before it when there is one: an upstream given as an endpoint's URL, as an API's
// reference shows it for one call (https://api.openai.com/v1/chat/completions), to which the proxy
// would append each request's own path. A Gemini method's path runs from its version on
// (/v1beta/models/m:streamGenerateContent, Vertex AI's /v1/projects/.../models/m:generateContent).
// Only whole segments match: a base path such as /completions-api or /messaging is the upstream's
// own.
var endpoint = regexp.MustCompile(`(?i)(/v[0-9]+((alpha|beta)[0-9]*)?)?/(chat/completions|completions|responses|embeddings|messages|messages/count_tokens|api/chat|api/generate|api/embed|api/embeddings)$` +
	`|(/v[0-9]+((alpha|beta)[0-9]*)?(/.+)?)?/models/[^/]+:[a-z]+$`)

// baseOf returns the base URL to give instead of upstream u of protocol p, and what it drops from
// u ("" when u is a base URL): an endpoint's path (see endpoint), a query or a fragment, and with
// them a version left at the end (which alone is refused after, in its own words). The proxy
// sends each request to u's path followed by the request's own path and query: an endpoint's URL
// got .../chat/completions/v1/chat/completions, and the client brings its own query (Azure's
// api-version). An Azure OpenAI deployment's path (/openai/deployments/...) is the client's too,
// forwarded as the client sends it: an endpoint's path is cut where it begins.
func baseOf(u *url.URL, p protocol) (base *url.URL, dropped string) {
	cut := len(u.Path)
	if loc := endpoint.FindStringIndex(u.Path); loc != nil {
		cut = loc[0]
		if i := strings.Index(strings.ToLower(u.Path[:cut]), "/openai/deployments/"); i >= 0 {
			cut = i
		}
	}
	query, fragment := u.RawQuery != "" || u.ForceQuery, u.Fragment != ""
	if cut == len(u.Path) && !query && !fragment {
		return u, ""
	}
	if loc := p.versions.FindStringIndex(u.Path[:cut]); loc != nil {
		cut = loc[0]
	}
	var parts []string
	if cut < len(u.Path) {
		parts = append(parts, u.Path[cut:])
	}
	if query {
		parts = append(parts, "the query")
	}
	if fragment {
		parts = append(parts, "the fragment")
	}
	b := *u
	b.Path, b.RawPath = u.Path[:cut], ""
	b.RawQuery, b.ForceQuery, b.Fragment, b.RawFragment = "", false, "", ""
	return &b, strings.Join(parts, " and ")
}

// vertexProject finds a Vertex AI project's path: /v1/projects/..., /v1beta1/projects/...
var vertexProject = regexp.MustCompile(`/v1[a-z0-9]*/projects/`)

// vertexHost reports whether host is Vertex AI's: aiplatform.googleapis.com, a region's
// (REGION-aiplatform.googleapis.com) or a multi-region's (aiplatform.us.rep.googleapis.com).
func vertexHost(host string) bool {
	host = strings.ToLower(host)
	return host == "aiplatform.googleapis.com" || strings.HasSuffix(host, "-aiplatform.googleapis.com") ||
		strings.HasPrefix(host, "aiplatform.") && strings.HasSuffix(host, ".rep.googleapis.com")
}

// azureDeployment returns where an Azure OpenAI deployment's path begins in path: the first
// /openai/deployments segment pair, in any case; -1 without one.
func azureDeployment(path string) int {
	const seg = "/openai/deployments"
	lower := strings.ToLower(path)
	for i := 0; ; {
		j := strings.Index(lower[i:], seg)
		if j < 0 {
			return -1
		}
		if end := i + j + len(seg); end == len(lower) || lower[end] == '/' {
			return i + j
		}
		i += j + len(seg)
	}
}

// azureV1 matches Azure's v1 API at the end of an upstream's path: /openai/v1, or an Azure AI
// Foundry project's /api/projects/P/openai/v1 (the first group), with an endpoint's path after it
// or not (the second group: /chat/completions, /responses, ...).
var azureV1 = regexp.MustCompile(`(?i)(/api/projects/[^/]+)?/openai/v1(/(?:chat/completions|completions|responses|embeddings))?$`)

// foundryModels matches a Foundry resource's model inference API at the end of an upstream's
// path: /models, with an endpoint's path after it or not.
var foundryModels = regexp.MustCompile(`(?i)/models(/(?:chat/completions|completions|embeddings))?$`)

// azureHost reports whether host is an Azure OpenAI, AI services or Foundry resource's
// (NAME.openai.azure.com, NAME.cognitiveservices.azure.com, NAME.services.ai.azure.com, and the
// same in Azure Government's azure.us and Azure China's azure.cn), the hosts httpitl tells
// Azure's v1 API by, in any case, with or without the root's trailing dot; of those services
// only, when given (".services.ai": a Foundry resource's, the one that serves /models/).
func azureHost(host string, only ...string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	services := []string{".openai", ".cognitiveservices", ".services.ai"}
	if len(only) > 0 {
		services = only
	}
	for _, service := range services {
		for _, cloud := range []string{".azure.com", ".azure.us", ".azure.cn"} {
			if suffix := service + cloud; len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		}
	}
	return false
}

// cutBase returns u cut where the path its clients send themselves begins, at i (an Azure
// deployment's, Azure's v1 API's, a Vertex AI project's), without its query and fragment, and
// what that drops.
func cutBase(u *url.URL, i int) (*url.URL, string) {
	dropped := []string{u.Path[i:]}
	if u.RawQuery != "" || u.ForceQuery {
		dropped = append(dropped, "the query")
	}
	if u.Fragment != "" {
		dropped = append(dropped, "the fragment")
	}
	b := *u
	b.Path, b.RawPath = u.Path[:i], ""
	b.RawQuery, b.ForceQuery, b.Fragment, b.RawFragment = "", false, "", ""
	return &b, strings.Join(dropped, " and ")
}

// proxyURL is the URL a client on this machine reaches the proxy at, listening at addr, with TLS
// or without.
func proxyURL(addr string, tls bool) string {
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	if port == "0" {
		port = "PORT" // chosen at start: :0 is no port a client reaches (anyPort says so)
	}
	return scheme + net.JoinHostPort(host, port)
}

// anyPort is what a message that gives proxyURL's URL adds for addr at port 0: what PORT is.
func anyPort(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil && port == "0" {
		return " (PORT: the one it announces at start)"
	}
	return ""
}

// flagHelp is returned after -h printed the usage.
var flagHelp = flag.ErrHelp

// config is the proxy's resolved configuration.
type config struct {
	addr            string
	upstream        map[string]*url.URL // by protocol name; a protocol without one is not configured
	tlsCert, tlsKey string
	// names holds, by flag, the environment variable its value came from, for the flags not given
	// on the command line: see name.
	names map[string]string
}

// name is how the user gave flag f: -f on the command line, or its environment variable when the
// value came from there. Errors name it, so that the user looks for the setting where it is.
func (c config) name(f string) string {
	if n, ok := c.names[f]; ok {
		return n
	}
	return "-" + f
}

// setting writes a setting as the user wrote it, with name from config.name: -f "value" or
// VARIABLE="value".
func setting(name, value string) string {
	if strings.HasPrefix(name, "-") {
		return fmt.Sprintf("%s %q", name, value)
	}
	return fmt.Sprintf("%s=%q", name, value)
}

// assign is setting without quotes, for the value to write instead.
func assign(name, value string) string {
	if strings.HasPrefix(name, "-") {
		return name + " " + value
	}
	return name + "=" + value
}

// parseConfig reads the flags in args, each of which falls back on its environment variable; a
// flag given on the command line wins.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	fs := flag.NewFlagSet("otelitl-proxy", flag.ContinueOnError)
	fs.SetOutput(out)
	// envOf is each flag's environment variable, named once: the flag's default, its help (the %s
	// of usage) and the errors about it read it from here.
	envOf := map[string]string{}
	flagEnv := func(name, env, fallback, usage string) *string {
		envOf[name] = env
		if v := getenv(env); v != "" {
			fallback = v
		}
		return fs.String(name, fallback, fmt.Sprintf(usage, env))
	}
	addr := flagEnv("addr", "OTELITL_PROXY_ADDR", "127.0.0.1:8787", "listen address, host:port (env %s); loopback by default")
	ups := map[string]*string{}
	for _, p := range protocols {
		ups[p.name] = flagEnv(p.name, p.env, "", fmt.Sprintf("%s upstream base URL, without %s, e.g. %s (env %%s)", p.title, p.version, p.example))
	}
	cert := flagEnv("tls-cert", "OTELITL_PROXY_TLS_CERT", "", "serve TLS with this PEM certificate (env %s); needs -tls-key")
	key := flagEnv("tls-key", "OTELITL_PROXY_TLS_KEY", "", "the PEM private key of -tls-cert (env %s)")
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: otelitl-proxy [flags]\n\nA streaming proxy that records every LLM generation through it as an OpenTelemetry span with its\nchunk timeline. Point OPENAI_BASE_URL (http://ADDR/v1), ANTHROPIC_BASE_URL (http://ADDR),\nthe Gemini base URL (http://ADDR) or OLLAMA_HOST (http://ADDR) at it. Spans are exported over OTLP\nwhen OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, unless\nOTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns tracing off.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, flagHelp
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q: every setting is a flag, such as -openai %s", fs.Arg(0), protocols[0].example)
	}
	c := config{addr: *addr, upstream: map[string]*url.URL{}, tlsCert: *cert, tlsKey: *key, names: map[string]string{}}
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	for f, env := range envOf {
		if !onCommandLine[f] && getenv(env) != "" {
			c.names[f] = env
		}
	}
	if _, port, err := net.SplitHostPort(c.addr); err != nil || port == "" {
		return config{}, fmt.Errorf("%s: want host:port, such as 127.0.0.1:8787 (or :8787 for every interface)", setting(c.name("addr"), c.addr))
	} else if err := listenPort(port); err != nil {
		// net.Listen said "listen tcp: address 99999: invalid port", without the range to give.
		return config{}, fmt.Errorf("%s: %w", setting(c.name("addr"), c.addr), err)
	}
	for _, p := range protocols {
		raw := strings.TrimSpace(*ups[p.name])
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			shown := urlpass.Redact(raw) // url.Parse could not read it: a password in it all the same
			if err == nil {
				shown = u.Redacted() // without a password it may carry
			}
			if urlpass.Pasted(raw) {
				// url.Parse ended the host at the password's /, ? or #: the URL has a host, and
				// asking for one would not say what to change.
				return config{}, fmt.Errorf("%s: its user or password holds a /, ? or #, which ends the host of a URL; write each percent-encoded (/ as %%2F, ? as %%3F, # as %%23)", setting(c.name(p.name), shown))
			}
			return config{}, fmt.Errorf("%s: want the API's base URL with http:// or https:// and a host, without a query, such as %s", setting(c.name(p.name), shown), p.example)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		if i := azureDeployment(u.Path); i >= 0 && p.name == "openai" {
			// No client path works through such a base: Azure OpenAI's clients send the
			// deployment's path themselves (/openai/deployments/D/openai/deployments/D/...), and
			// OpenAI's send /v1/chat/completions, which no deployment serves.
			base, dropped := cutBase(u, i)
			return config{}, fmt.Errorf("%s: drop %s, as in %s: an Azure OpenAI client sends each request's deployment path and api-version itself (/openai/deployments/NAME/chat/completions?api-version=...), which the proxy appends to the upstream: give the client the proxy's URL as its Azure endpoint (AZURE_OPENAI_ENDPOINT=%s)%s",
				setting(c.name(p.name), u.Redacted()), dropped, assign(c.name(p.name), base.Redacted()), proxyURL(c.addr, c.tlsCert != ""), anyPort(c.addr))
		}
		if m := azureV1.FindStringSubmatchIndex(u.Path); p.name == "openai" && m != nil && azureHost(u.Hostname()) {
			// Azure's v1 base URL as its docs give it (https://NAME.openai.azure.com/openai/v1,
			// with the ?api-version=preview its preview takes, or an endpoint's whole URL): cut to
			// the resource, not to .../openai as the trailing /v1 alone would say, which serves
			// OpenAI's client at the proxy's /v1 but doubles the /openai of every path an Azure
			// client sends, and of OPENAI_BASE_URL=http://ADDR/openai/v1 as the README gives it.
			fixed, dropped := cutBase(u, m[0])
			at := proxyURL(c.addr, c.tlsCert != "")
			if m[2] >= 0 {
				// A Foundry project's (.../api/projects/P/openai/v1): the proxy routes the project's
				// path to the -openai upstream, so the client keeps it and the upstream is the resource.
				client := u.Path[m[0]:]
				if m[4] >= 0 {
					client = u.Path[m[0]:m[4]] // without the endpoint's path
				}
				return config{}, fmt.Errorf("%s: drop %s, as in %s: the proxy appends the client's own path, the project's included: give OpenAI's client OPENAI_BASE_URL=%s%s%s",
					setting(c.name(p.name), u.Redacted()), dropped, assign(c.name(p.name), fixed.Redacted()), at, client, anyPort(c.addr))
			}
			return config{}, fmt.Errorf("%s: drop %s, as in %s: Azure OpenAI's clients send the /openai of each path themselves, which the proxy appends to the upstream: give OpenAI's client OPENAI_BASE_URL=%s/openai/v1 for the v1 API, and an Azure client AZURE_OPENAI_ENDPOINT=%s%s",
				setting(c.name(p.name), u.Redacted()), dropped, assign(c.name(p.name), fixed.Redacted()), at, at, anyPort(c.addr))
		}
		if m := foundryModels.FindStringIndex(u.Path); p.name == "openai" && m != nil && azureHost(u.Hostname(), ".services.ai") {
			// A Foundry resource's model inference endpoint, .../models as the portal gives it:
			// the client sends /models/... itself (the proxy routes it to this upstream), so the
			// upstream is the resource; .../models sent every request to /models/models/...
			fixed, dropped := cutBase(u, m[0])
			return config{}, fmt.Errorf("%s: drop %s, as in %s: the model inference API's clients send /models/... themselves, which the proxy appends to the upstream: give the client OPENAI_BASE_URL=%s/models%s",
				setting(c.name(p.name), u.Redacted()), dropped, assign(c.name(p.name), fixed.Redacted()), proxyURL(c.addr, c.tlsCert != ""), anyPort(c.addr))
		}
		if m := vertexProject.FindStringIndex(u.Path); m != nil && vertexHost(u.Hostname()) {
			// Vertex AI's base URL for a project, as Google's docs write it
			// (https://REGION-aiplatform.googleapis.com/v1/projects/P/locations/L): its clients
			// send /v1/projects/P/locations/L/... themselves, so the upstream is the host; taken as
			// it was, every request went to .../locations/L/v1/projects/... and was answered 404.
			fixed, dropped := cutBase(u, m[0])
			return config{}, fmt.Errorf("%s: drop %s, as in %s: the client sends its project's path itself (/v1/projects/P/locations/L/...), which the proxy appends to the upstream: give the client the proxy's URL in place of Vertex's host (%s, with /v1 after it where the client's own base URL ends in /v1, as Python's AnthropicVertex's does)%s",
				setting(c.name(p.name), u.Redacted()), dropped, assign(c.name(p.name), fixed.Redacted()), proxyURL(c.addr, c.tlsCert != ""), anyPort(c.addr))
		}
		if base, dropped := baseOf(u, p); dropped != "" {
			// Redacted: the URL may carry a password, which the message would show twice.
			return config{}, fmt.Errorf("%s: drop %s, as in %s: the proxy appends the client's own path and query, such as %s",
				setting(c.name(p.name), u.Redacted()), dropped, assign(c.name(p.name), base.Redacted()), p.clientPath)
		}
		if loc := p.versions.FindStringIndex(u.Path); loc != nil {
			n := loc[0]
			fixed := *u
			fixed.Path = u.Path[:n]
			fixed.RawPath = ""
			// Redacted: the URL may carry a password, which the message would show twice.
			return config{}, fmt.Errorf("%s: drop the trailing %s, as in %s: the proxy appends the client's own path, such as %s",
				setting(c.name(p.name), u.Redacted()), u.Path[n:], assign(c.name(p.name), fixed.Redacted()), p.clientPath)
		}
		c.upstream[p.name] = u
	}
	if c.tlsCert != "" && c.tlsKey == "" {
		return config{}, fmt.Errorf("%s is set without -tls-key (or %s): give both to serve TLS, or neither", c.name("tls-cert"), envOf["tls-key"])
	}
	if c.tlsKey != "" && c.tlsCert == "" {
		return config{}, fmt.Errorf("%s is set without -tls-cert (or %s): give both to serve TLS, or neither", c.name("tls-key"), envOf["tls-cert"])
	}
	// Without an upstream every API request would be answered 502: refused here, where the user
	// starting the proxy sees it, instead of at an application's first request.
	if len(c.upstream) == 0 {
		var flags, envs []string
		for _, p := range protocols {
			flags, envs = append(flags, "-"+p.name), append(envs, p.env)
		}
		return config{}, fmt.Errorf("no upstream is configured: set at least one of %s (or %s) to the API's base URL, such as -openai %s", orList(flags), orList(envs), protocols[0].example)
	}
	return c, nil
}

// orList writes a, b, c or d.
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// listenPort reports why port is none net.Listen takes: a number from 0 to 65535 (0: any free
// one), or a service's name (http).
func listenPort(port string) error {
	if n, err := strconv.ParseInt(port, 10, 64); err == nil {
		if n < 0 || n > 65535 {
			return fmt.Errorf("port %s is outside 0 to 65535; give one within, such as 127.0.0.1:8787 (0: any free port, announced at start)", port)
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("port %q is neither a number nor a service's name; give one from 0 to 65535, such as 127.0.0.1:8787", port)
	}
	return nil
}
