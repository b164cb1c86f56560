package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/strata-cache/strata/sampler/report"
	"github.com/strata-cache/strata/sampler/samplelog"
)

func init() {
	register("report", "analyse sample logs: working sets, duplication factor, hotness, promotion model", runReport)
}

const reportUsage = `usage: strata report [--window 1h|1d|7d|all] [--format text|json|html] [--out DIR] [--budget BYTES|PCT%] FILES|DIRS...

Merges the sample logs (.jsonl or .jsonl.gz) of one or more strata, the clusters
of a region, and reports per key family: accesses, unique keys, working set per
cluster and for the region, duplication factor, hotness, hit ratios and the
promotion model with a recommended threshold N. A directory stands for the
*.jsonl and *.jsonl.gz files in it. Lines that cannot be read are reported on
stderr as FILE:LINE: reason and skipped.

`

// runReport is the `strata report` subcommand.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, reportUsage)
		fs.PrintDefaults()
	}
	window := fs.String("window", "1d", "report on the records of this span ending at the newest record: 1h, 1d, 7d, all, or a duration")
	format := fs.String("format", "text", "output format: text, json or html")
	out := fs.String("out", "", "write report.txt, report.json or report.html into this directory instead of stdout")
	budget := fs.String("budget", "10%", "L1 budget per family and cluster for the recommended N: bytes (512MiB) or a percentage of the family's region working set")

	// Flags may follow file names: parse, take one file, repeat.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		files = append(files, args[0])
		args = args[1:]
	}
	if len(files) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: no sample log files given", errUsage)
	}
	win, err := report.ParseWindow(*window)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	b, err := report.ParseBudget(*budget)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	write, ext := report.WriteText, "txt"
	switch *format {
	case "text":
	case "json":
		write, ext = report.WriteJSON, "json"
	case "html":
		write, ext = report.WriteHTML, "html"
	default:
		return fmt.Errorf("%w: format %q: want text, json or html", errUsage, *format)
	}

	paths, err := report.ExpandPaths(files)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no sample log files in %v", files)
	}
	r, err := report.FromFiles(paths, win, report.Options{Window: *window, Budget: b}, func(le *samplelog.LineError) {
		fmt.Fprintln(stderr, le.Error())
	})
	if err != nil {
		return err
	}

	if *out == "" {
		return write(stdout, r)
	}
	var buf bytes.Buffer
	if err := write(&buf, r); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*out, "report."+ext)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, path)
	return err
}
