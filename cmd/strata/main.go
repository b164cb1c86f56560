package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	benchcli "github.com/strata-cache/strata/bench/cli"
	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/control/admin/ctl"
	"github.com/strata-cache/strata/sampler/report"
)

// version is stamped by the linker for releases (-X main.version=...).
var version = "0.1.0-dev"

// subcommand is one verb of the strata binary. run receives the arguments
// after the verb and writes its normal output to stdout.
type subcommand struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// subcommands is filled by the init functions of the files named after each
// verb (serve.go, report.go, bench.go, ctl.go, config.go, ...).
var subcommands = map[string]subcommand{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) error) {
	subcommands[name] = subcommand{summary: summary, run: run}
}

func init() {
	register("version", "print the version", func(_ []string, stdout, _ io.Writer) error {
		_, err := fmt.Fprintf(stdout, "strata %s\n", version)
		return err
	})
}

// errUsage marks an error caused by bad command-line arguments; main exits 2.
var errUsage = errors.New("usage")

// usageErrors are errUsage and its counterparts in the packages that parse
// the arguments of a verb.
var usageErrors = []error{errUsage, config.ErrUsage, benchcli.ErrUsage, ctl.ErrUsage, report.ErrUsage}

func isUsage(err error) bool {
	for _, u := range usageErrors {
		if errors.Is(err, u) {
			return true
		}
	}
	return false
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "strata: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := sc.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "strata %s: %v\n", args[0], err)
		if isUsage(err) {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: strata <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, subcommands[n].summary)
	}
}
