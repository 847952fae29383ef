// Command otelcol-itl is an OpenTelemetry Collector distribution with the itl processor and the
// itl_metrics connector besides the standard components an LLM observability pipeline needs.
//
//	otelcol-itl --config exporter-config/prometheus.yaml
//	otelcol-itl validate --config exporter-config/gateway.yaml
//	otelcol-itl components
//
// Its "env" configuration provider (package github.com/otelitl/itl/collector/requiredenvprovider) adds ${env:NAME:?message} to the
// collector's ${env:NAME} and ${env:NAME:-default}: the shipped configs use it for every secret and
// endpoint they cannot run without, so that the collector refuses to start, naming the variable,
// rather than send an empty token. An error about a value a variable set names the variable too
// (envSources). It also refuses an OTLP/HTTP exporter whose endpoint already ends in /v1/traces
// or /v1/metrics, to which the exporter would append them again (baseEndpoints), an address no
// component could use (a listen address without a port or beyond 65535, an OTLP/HTTP endpoint
// without http://: addresses), and a TLS file that cannot be read or does not hold what its key
// needs (a CA file that is not a PEM certificate, a certificate and a key that are not a pair) or
// a queue directory that cannot be written (settingFiles), which the collector would find only as
// the component started, or at its first send, and a queue_size the collector refuses without
// saying what to give or takes as another number (ITL_QUEUE_BYTES=10MB, 1, a fraction: queueSizes). A queue directory another process holds (a second
// collector on one ITL_QUEUE_DIR), which the collector reports as a bare "timeout" of the
// exporter, is explained with the directory and its variable (queueStores). print-config,
// redacted (its default mode), writes a URL's password as xxxxx too (urlPasswords), which the
// collector's own printed as it was.
// A key that is no setting of a component it did not write, which the collector names by a Go
// type alone, is shown with its place and the setting it likely misspells (keyTypos).
package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelitl/itl/collector/requiredenvprovider"
)

// Version is the distribution's version.
const Version = "0.1.0"

// Settings returns the collector settings of the distribution.
func Settings() otelcol.CollectorSettings {
	set, _, _, _ := settings()
	return set
}

// settings returns the collector settings, what their document providers note of the variables
// each key is set from, and where the exporters' queues on disk are, for the errors main prints.
func settings() (otelcol.CollectorSettings, *envSources, *queueStores, *keyTypos) {
	sources, queues, typos := &envSources{}, &queueStores{}, &keyTypos{}
	// The env provider with its converter: a config missing several required variables fails
	// naming them all, not one a start.
	env, missing := requiredenvprovider.NewFactories()
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol-itl",
			Description: "OpenTelemetry Collector with the otelitl components: TTFT, inter-token latency and throughput of streamed LLM replies",
			Version:     Version,
		},
		Factories: Components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					sources.wrap(fileprovider.NewFactory()),
					env, // the "env" scheme, with ${env:NAME:?message}
					sources.wrap(yamlprovider.NewFactory()),
				},
				ConverterFactories: []confmap.ConverterFactory{missing, baseEndpoints(), addresses(), settingFiles(), queueSizes(), authenticators(), queues.converter(), typos.converter()},
				DefaultScheme:      "env",
			},
		},
	}, sources, queues, typos
}

func main() {
	set, sources, queues, typos := settings()
	sub := invoked(os.Args[1:])
	validate := sub != nil && sub.Name() == "validate"
	if validate {
		set.LoggingOptions = append(set.LoggingOptions, validateLog(os.Stderr))
	}
	if printsRedacted(sub) {
		r := &set.ConfigProviderSettings.ResolverSettings
		r.ConverterFactories = append(r.ConverterFactories, urlPasswords())
	}
	cmd := otelcol.NewCommand(set)
	// The error is printed once, here: cobra prints it by default, and log.Fatal would print it again.
	cmd.SilenceErrors = true
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", tidy(err.Error()))
		// A queue's file locked by another process: the note names the directory's key, for
		// explain to name the variable that set it.
		if note := queues.lockHeld(err); note != "" {
			fmt.Fprintln(os.Stderr, note)
			err = fmt.Errorf("%w\n%s", err, note)
		}
		if note := sources.beyondInt64(err); note != "" {
			fmt.Fprintln(os.Stderr, note)
		}
		if note := typos.explain(err); note != "" {
			fmt.Fprintln(os.Stderr, note)
		}
		if hint := sources.explain(err); hint != "" {
			fmt.Fprintln(os.Stderr, hint)
		}
		os.Exit(1)
	}
	if validate {
		// On stdout: a success is not an error, and a script that keeps stderr for failures (or
		// shows it in red) should not find one there. Errors and the providers' log stay on stderr.
		fmt.Fprintln(os.Stdout, validated)
	}
}

// tidy takes out of a configuration error the empty name (two single quotes) that the collector's decoder puts
// before the error of a component's own Unmarshal, so that the key stands right after the
// component: "reading configuration for "itl_metrics": metrics_flush_interval: 15 has no unit".
// Where the Unmarshal returns several errors joined, the decoder lists them on lines of their own
// after "decoding failed due to the following error(s):", the first line begun with the quotes.
// It also prints once an error the collector's validation finds twice (onceEach).
func tidy(msg string) string { return onceEach(emptyName.ReplaceAllString(msg, "$1")) }

// emptyName is the decoder's empty name, after a colon or at the start of a line.
var emptyName = regexp.MustCompile(`(?m)(^|: )'' `)

// errorLine is a line of a configuration error: what comes before the key (the first line's
// "invalid configuration: "), the key, and the error.
var errorLine = regexp.MustCompile(`^(.*?)((?:[\w/.\[\]-]+::)+[\w/.\[\]-]+): (.+)$`)

// onceEach drops from a configuration error a line that repeats another's error under the same key
// or a key within it, keeping the shorter key, where the first one stood. configtls's checks of a
// tls section are also its embedded config's, which the collector validates as a section of its
// own, so that "TLS configuration must include both certificate and key" was printed for
// exporters::otlp_grpc::clientconfig::tls and again for ...::tls::config.
func onceEach(msg string) string {
	lines := strings.Split(msg, "\n")
	type parsed struct{ prefix, key, err string }
	var kept []string
	var keys []parsed // kept's, where a line parses
	for _, line := range lines {
		m := errorLine.FindStringSubmatch(line)
		if m == nil {
			kept, keys = append(kept, line), append(keys, parsed{})
			continue
		}
		p := parsed{m[1], m[2], m[3]}
		dup := false
		for i, q := range keys {
			if q.key == "" || q.err != p.err {
				continue
			}
			switch {
			case q.key == p.key, strings.HasPrefix(p.key, q.key+"::"):
				dup = true
			case strings.HasPrefix(q.key, p.key+"::"):
				dup = true
				keys[i].key = p.key
				kept[i] = q.prefix + p.key + ": " + q.err
			}
			if dup {
				break
			}
		}
		if !dup {
			kept, keys = append(kept, line), append(keys, p)
		}
	}
	return strings.Join(kept, "\n")
}

// validated is what validate prints on success, where it printed nothing: a user could not tell a
// check that passed from one that did not run, and it says what validate does not check.
const validated = "The configuration is valid: every component's settings were checked, with the TLS files, directories and addresses they name. " +
	"Whether a peer trusts the certificates, an address is free or an endpoint answers shows only when the collector starts."

// invoked returns the subcommand args run, as cobra finds it: after the flags too
// (otelcol-itl --config c.yaml validate), not only first; its flags parsed. It returns nil for none,
// and for a subcommand's help (validate -h), which runs nothing: validate's success line would
// claim a validation.
func invoked(args []string) *cobra.Command {
	cmd, rest, err := otelcol.NewCommand(Settings()).Find(args)
	if err != nil || !cmd.HasParent() {
		return nil
	}
	cmd.InitDefaultHelpFlag()
	if cmd.ParseFlags(rest) != nil {
		return cmd // it fails on the flags, and says so: no success line either way
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	return cmd
}

// printsRedacted reports whether cmd is print-config printing the configuration redacted, its
// default --mode: --mode unredacted asks for every value as it is, a URL's password too.
func printsRedacted(cmd *cobra.Command) bool {
	if cmd == nil || cmd.Name() != "print-config" {
		return false
	}
	mode, _ := cmd.Flags().GetString("mode")
	return !strings.EqualFold(mode, "unredacted")
}

// validateLog shows validate's users what the configuration providers log while it resolves: that
// a variable's default took over from an empty value, or that a variable is unset. The collector
// holds those lines until its own logger starts, which validate never does, so that they were
// lost.
func validateLog(w io.Writer) zap.Option {
	return zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		enc := zap.NewDevelopmentEncoderConfig()
		enc.TimeKey, enc.CallerKey = "", ""
		return zapcore.NewTee(c, zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), zapcore.InfoLevel))
	})
}
