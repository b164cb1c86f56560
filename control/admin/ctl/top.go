package ctl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/strata-cache/strata/control/admin/top"
)

// runTop is `strata ctl top`: it parses its flags and hands over to
// package top until Ctrl-C.
func runTop(base, token string, hc *http.Client, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ctl top", flag.ContinueOnError)
	fs.SetOutput(stderr)
	interval := fs.Duration("interval", time.Second, "time between frames")
	count := fs.Int("count", 0, "stop after `N` frames; 0 runs until interrupted")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return top.Run(ctx, top.Config{Base: base, Token: token, Out: stdout, ANSI: top.IsTerminal(stdout), Interval: *interval, Count: *count, HTTP: hc})
}
