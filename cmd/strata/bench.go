package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-cache/strata/internal/configfile"

	benchcli "github.com/strata-cache/strata/bench/cli"
)

func init() {
	register("bench", benchcli.Summary, func(args []string, stdout, stderr io.Writer) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return benchcli.Run(ctx, args, stdout, stderr, func(s string) (int64, error) {
			b, err := configfile.ParseSize(s) // the configuration file's size syntax
			return int64(b), err
		})
	})
}
