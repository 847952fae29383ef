package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/otelcol"
	"go.uber.org/zap"

	"github.com/otelitl/itl/internal/readme"
)

// featureGatesDefault is what README.md writes for --feature-gates' default. The flag's own default
// is every registered gate with its state, which moves with each dependency upgrade; what the
// README can say truly is where to read them.
const featureGatesDefault = "each gate's own (`otelcol-itl featuregate` lists them)"

// readmeCommand returns otelcol-itl's root command as Execute completes it: with the -h and -v flags
// and the help and completion subcommands, which cobra adds only when it runs.
func readmeCommand(t *testing.T) *cobra.Command {
	t.Helper()
	cmd := otelcol.NewCommand(Settings())
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultCompletionCmd()
	return cmd
}

// readmeDefault is a flag's default as the README's tables write it: `value`, or none for an
// empty list, an empty string or a bool that is off.
func readmeDefault(f *pflag.Flag) string {
	switch {
	case f.Name == "feature-gates":
		return featureGatesDefault
	case f.DefValue == "" || f.DefValue == "[]" || f.Value.Type() == "bool" && f.DefValue == "false":
		return "none"
	}
	return "`" + f.DefValue + "`"
}

// readmeFlagCell is how README.md's first column names flag f: `--name`, after `-x`, when it has a
// shorthand.
func readmeFlagCell(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "`-" + f.Shorthand + "`, `--" + f.Name + "`"
	}
	return "`--" + f.Name + "`"
}

// TestREADMEFlags: README.md's table of flags is the root command's flags, each with its
// shorthand and its default: a flag added, removed or renamed, or a default changed, by this
// distribution or by the collector it is built on, without the README fails here.
func TestREADMEFlags(t *testing.T) {
	want := map[string]string{} // first cell: default cell
	readmeCommand(t).Flags().VisitAll(func(f *pflag.Flag) { want[readmeFlagCell(f)] = readmeDefault(f) })
	if len(want) < 5 {
		t.Fatalf("the command defines %d flags: %v", len(want), want)
	}
	got := map[string]string{}
	for _, r := range readme.Table(t, "README.md", "## Flags") {
		if len(r) < 3 {
			t.Errorf("README.md: flag row %q has %d cells, want flag | default | what it does", r, len(r))
			continue
		}
		if _, dup := got[r[0]]; dup {
			t.Errorf("README.md lists %s twice", r[0])
		}
		got[r[0]] = r[1]
		if strings.TrimSpace(r[2]) == "" {
			t.Errorf("README.md: %s says nothing of what it does", r[0])
		}
	}
	readme.Compare(t, "otelcol-itl", "flag", want, got)
}

// TestREADMESubcommands: README.md's table of subcommands is the command's, and each row names
// the flags the subcommand has beyond the root's (print-config's --format, --mode, --validate),
// with their defaults.
func TestREADMESubcommands(t *testing.T) {
	cmd := readmeCommand(t)
	root := map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) { root[f.Name] = true })
	rows := map[string]string{}
	for _, r := range readme.Table(t, "README.md", "## Subcommands") {
		rows[r[0]] = strings.Join(r[1:], " | ")
	}
	want := map[string]string{}
	for _, sub := range cmd.Commands() {
		name := "`" + sub.Name() + "`"
		want[name] = ""
		row, ok := rows[name]
		if !ok {
			continue // compare says so
		}
		sub.InitDefaultHelpFlag()
		sub.Flags().VisitAll(func(f *pflag.Flag) {
			if root[f.Name] {
				return
			}
			cell := "`--" + f.Name + "`"
			if d := readmeDefault(f); d != "none" {
				cell += " (default " + d + ")"
			}
			if !strings.Contains(row, cell) {
				t.Errorf("README.md's row for %s does not name %s, a flag of the subcommand", name, cell)
			}
		})
	}
	if len(want) < 5 {
		t.Fatalf("the command has %d subcommands", len(want))
	}
	got := map[string]string{}
	for k := range rows {
		got[k] = ""
	}
	readme.Compare(t, "otelcol-itl", "subcommand", want, got)
}

// TestREADMESources: README.md's table of configuration sources names every scheme the
// distribution's providers resolve, and its table of converters has a row for each converter it
// adds: a provider or a converter added or removed without the README fails here.
func TestREADMESources(t *testing.T) {
	set, _, _, _ := settings()
	rs := set.ConfigProviderSettings.ResolverSettings
	want := map[string]string{}
	for _, f := range rs.ProviderFactories {
		p := f.Create(confmap.ProviderSettings{Logger: zap.NewNop()})
		want["`"+p.Scheme()+":`"] = ""
	}
	got := map[string]string{}
	for _, r := range readme.Table(t, "README.md", "## Configuration sources") {
		got[r[0]] = ""
	}
	readme.Compare(t, "otelcol-itl", "scheme", want, got)
	if n := len(readme.Table(t, "README.md", "## Converters")); n != len(rs.ConverterFactories) {
		t.Errorf("README.md's table of converters has %d rows, the distribution adds %d converters", n, len(rs.ConverterFactories))
	}
	if !strings.Contains(readme.Text(t, "README.md"), "default scheme is `"+rs.DefaultScheme+"`") {
		t.Errorf("README.md does not say that the default scheme is `%s`", rs.DefaultScheme)
	}
}

// TestREADMEComponents: README.md's table of components lists, by kind, every component the
// distribution includes, and no other.
func TestREADMEComponents(t *testing.T) {
	f, err := Components()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	add := func(kind string, ids []string) {
		for _, id := range ids {
			want[kind+" `"+id+"`"] = ""
		}
	}
	add("receivers", readmeNames(f.Receivers))
	add("processors", readmeNames(f.Processors))
	add("connectors", readmeNames(f.Connectors))
	add("exporters", readmeNames(f.Exporters))
	add("extensions", readmeNames(f.Extensions))
	got := map[string]string{}
	quoted := regexp.MustCompile("`([^`]+)`")
	for _, r := range readme.Table(t, "README.md", "## Components") {
		if len(r) < 2 {
			t.Errorf("README.md: component row %q, want kind | components", r)
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(r[1], -1) {
			got[r[0]+" `"+m[1]+"`"] = ""
		}
	}
	readme.Compare(t, "otelcol-itl", "component", want, got)
}

// TestREADMELinks: every relative link of README.md names a file that exists and, with an anchor
// into a Markdown file, a heading of that file.
func TestREADMELinks(t *testing.T) { readme.CheckLinks(t, "README.md") }

func readmeNames[F interface{ Type() T }, T interface{ String() string }, K comparable](m map[K]F) []string {
	var out []string
	for _, f := range m {
		out = append(out, f.Type().String())
	}
	return out
}
