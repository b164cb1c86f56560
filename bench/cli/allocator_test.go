package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// The JSON of `strata bench allocator` carries the fields the issue names.
func TestBenchAllocatorJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"allocator", "--shards", "3000", "--servers", "40", "--seed", "1", "--json"}
	if err := runBench(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	for _, k := range []string{"solve_seconds", "violations_before", "violations_after", "max_over_mean", "moves", "min_moves"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in %s", k, stdout.String())
		}
	}
	if doc["violations_after"] != 0.0 || doc["violations_before"] == 0.0 {
		t.Errorf("violations %v -> %v", doc["violations_before"], doc["violations_after"])
	}
}

func TestBenchAllocatorCompareTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runBench([]string{"allocator", "--compare", "--shards", "1024"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"on 16 servers", "static rendezvous", "load-aware, mean +10%", "load-aware, mean +2%"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestBenchAllocatorUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"allocator", "--shards", "0"},
		{"allocator", "--replicas", "5", "--servers", "3"},
		{"allocator", "--compare", "--servers", "0"},
		{"allocator", "stray"},
	} {
		var stdout, stderr bytes.Buffer
		if err := runBench(args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("runBench(%q) = %v", args, err)
		}
	}
}

// runBench runs a verb that needs neither a context nor sizes.
func runBench(args []string, stdout, stderr io.Writer) error {
	return Run(context.Background(), args, stdout, stderr, nil)
}
