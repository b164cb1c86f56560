package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/strata-cache/strata/sampler/samplelog"
)

// ExpandPaths replaces each directory in paths by the sample log files in
// it (*.jsonl and *.jsonl.gz, sorted; files still being written, *.part,
// are left out unless named explicitly). Files are kept as given.
func ExpandPaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("sample log: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("sample log: %w", err)
		}
		var found []string
		for _, e := range ents {
			if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".jsonl.gz")) {
				found = append(found, filepath.Join(p, n))
			}
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// FromFiles reads sample log files (plain or gzip) and reports on the
// window of length window that ends at the newest record (window ≤ 0: all
// records). opts.Since and opts.Until are set from the window; opts.Window
// defaults to its name. Every line that cannot be used is passed to bad and
// skipped. The error is for files that cannot be opened.
func FromFiles(paths []string, window time.Duration, opts Options, bad func(*samplelog.LineError)) (*Report, error) {
	if bad == nil {
		bad = func(*samplelog.LineError) {}
	}
	if opts.Window == "" {
		opts.Window = WindowName(window)
	}
	if window > 0 {
		// First pass: the newest record ends the window. Bad lines are
		// reported by the second pass only.
		var newest int64
		var any bool
		for _, p := range paths {
			err := samplelog.ScanFile(p, func(e *samplelog.Entry) {
				if !any || e.Time > newest {
					newest, any = e.Time, true
				}
			}, func(*samplelog.LineError) {})
			if err != nil {
				return nil, err
			}
		}
		if any {
			opts.Until = newest
			opts.Since = newest - int64(window)
		}
	}
	agg := NewAggregator(opts)
	for _, p := range paths {
		err := samplelog.ScanFile(p, agg.Add, func(le *samplelog.LineError) {
			agg.Skipped(1)
			bad(le)
		})
		if err != nil {
			return nil, err
		}
	}
	return agg.Report(), nil
}
