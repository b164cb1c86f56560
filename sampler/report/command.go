package report

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/strata-cache/strata/sampler/samplelog"
)

// Summary is the command's line in the binary's command list.
const Summary = "analyse sample logs: working sets, duplication factor, hotness, promotion model"

// ErrUsage marks an error caused by bad command-line arguments; the binary
// exits 2 on it. Its text is "usage", the prefix of every such message.
var ErrUsage = errors.New("usage")

const reportUsage = `usage: strata report [--window 1h|1d|7d|all] [--format text|json|html] [--out DIR] [--budget BYTES|PCT%] FILES|DIRS...

Merges the sample logs (.jsonl or .jsonl.gz) of one or more strata, the clusters
of a region, and reports per key family: accesses, unique keys, working set per
cluster and for the region, duplication factor, hotness, hit ratios and the
promotion model with a recommended threshold N. A directory stands for the
*.jsonl and *.jsonl.gz files in it. Lines that cannot be read are reported on
stderr as FILE:LINE: reason and skipped.

`

// Run is `strata report ARGS`: it merges the sample logs the arguments
// name and writes the report to stdout, or into --out and its path to
// stdout; unreadable lines are reported on stderr and skipped. Bad
// arguments return an error that wraps ErrUsage; flag.ErrHelp after -h.
func Run(args []string, stdout, stderr io.Writer) error {
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
			return fmt.Errorf("%w: %v", ErrUsage, err)
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
		return fmt.Errorf("%w: no sample log files given", ErrUsage)
	}
	win, err := ParseWindow(*window)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	b, err := ParseBudget(*budget)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	write, ext := WriteText, "txt"
	switch *format {
	case "text":
	case "json":
		write, ext = WriteJSON, "json"
	case "html":
		write, ext = WriteHTML, "html"
	default:
		return fmt.Errorf("%w: format %q: want text, json or html", ErrUsage, *format)
	}

	paths, err := ExpandPaths(files)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no sample log files in %v", files)
	}
	r, err := FromFiles(paths, win, Options{Window: *window, Budget: b}, func(le *samplelog.LineError) {
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
