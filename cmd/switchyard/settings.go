package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envPrefix starts the environment variable of every flag: --max-candidates
// is SWITCHYARD_MAX_CANDIDATES.
const envPrefix = "SWITCHYARD_"

// envName is the environment variable that sets a flag.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// loadSettings fills the flags of fs from, in increasing precedence: the
// YAML config file named by the "config" flag (or SWITCHYARD_CONFIG), the
// SWITCHYARD_* environment, and the command line. Every flag is a config key
// (with "-" or "_") and an environment variable; all three go through the
// flag's own parser, so they accept the same values and fail the same way.
func loadSettings(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	// First pass: the command line alone, into stand-ins, to find -config and
	// which flags it sets (parsing into the real flags twice would repeat
	// repeatable ones).
	probe := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	probe.SetOutput(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		b, isBool := f.Value.(interface{ IsBoolFlag() bool })
		probe.Var(&probeValue{isBool: isBool && b.IsBoolFlag()}, f.Name, f.Usage)
	})
	if err := probe.Parse(args); err != nil {
		return fs.Parse(args) // reports the error (or prints help) as the real flags do
	}
	if probe.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", probe.Args())
	}
	set := map[string]bool{}
	probe.Visit(func(f *flag.Flag) { set[f.Name] = true })

	path := getenv(envName("config"))
	if f := probe.Lookup("config"); f != nil && set["config"] {
		path = f.Value.String()
	}
	if path != "" {
		if err := applyConfigFile(fs, path); err != nil {
			return err
		}
	}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		v := getenv(envName(f.Name))
		if v == "" || set[f.Name] || envErr != nil {
			return
		}
		if err := f.Value.Set(v); err != nil {
			envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
		}
	})
	if envErr != nil {
		return envErr
	}
	// Last pass: the command line wins.
	return fs.Parse(args)
}

// applyConfigFile sets flags from a YAML mapping of flag names to values.
// A list sets a repeatable flag once per element; a mapping sets it once per
// "key=value" entry. Unknown keys are errors, so typos do not pass silently.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		name := strings.ReplaceAll(key, "_", "-")
		f := fs.Lookup(name)
		if f == nil || name == "config" {
			return fmt.Errorf("config file %s: unknown key %q", path, key)
		}
		var values []string
		switch v := doc[key].(type) {
		case []any:
			for _, e := range v {
				values = append(values, fmt.Sprint(e))
			}
		case map[string]any:
			ks := make([]string, 0, len(v))
			for k := range v {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				values = append(values, fmt.Sprintf("%s=%v", k, v[k]))
			}
		case nil:
			continue
		default:
			values = []string{fmt.Sprint(v)}
		}
		for _, s := range values {
			if err := f.Value.Set(s); err != nil {
				return fmt.Errorf("config file %s: %s: %w", path, key, err)
			}
		}
	}
	return nil
}

// keyValues is a repeatable "key=value" flag.
type keyValues map[string]string

func (kv keyValues) String() string {
	parts := make([]string, 0, len(kv))
	for k, v := range kv {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (kv keyValues) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" || v == "" {
			return fmt.Errorf("want key=value, got %q", part)
		}
		kv[k] = v
	}
	return nil
}

// probeValue stands in for a flag's value during loadSettings' first pass.
type probeValue struct {
	value  string
	isBool bool
}

func (p *probeValue) String() string     { return p.value }
func (p *probeValue) Set(s string) error { p.value = s; return nil }
func (p *probeValue) IsBoolFlag() bool   { return p.isBool }
