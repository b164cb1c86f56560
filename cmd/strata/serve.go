package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/configfile"
)

func init() {
	register("serve", "run the proxy (embedded L1/L2 tiers unless configured otherwise)", runServe)
}

// runServe is `strata serve`: load the configuration (file, then flags),
// build and start the server, then follow signals until told to stop.
//
//	SIGHUP          re-read the file, apply what can change live, log the rest
//	SIGTERM, SIGINT drain within [server] drain_timeout and exit; a second
//	                signal cuts the drain short
func runServe(args []string, _, stderr io.Writer) error {
	f, err := config.ParseFlags(args, stderr)
	if err != nil {
		return err
	}
	s, err := config.Load(f.Path, f)
	if err != nil {
		return err
	}
	log, level := newLogger(s.LogFormat, s.LogLevel, stderr)
	applyMemoryLimit(s, log)
	a, err := buildServer(s, log, level)
	if err != nil {
		return err
	}
	// Signals are caught before Start so that one arriving while starting
	// is not the default (fatal) action.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	// A predecessor's sockets are received once everything is built, so
	// that a configuration it cannot run never touches the running one.
	h, in, err := openHandoff(s, log)
	if err != nil {
		return err
	}
	var successor <-chan struct{}
	if h != nil {
		defer h.Close() // before Serve: the predecessor keeps serving
		successor = h.Successor()
	}
	if err := a.takeOverAndStart(h, in, sig); err != nil {
		return err
	}
	for {
		select {
		case v := <-sig:
			if v == syscall.SIGHUP {
				a.reloadFile(f)
				continue
			}
			log.Info("stopping: draining connections", "signal", v.String(), "timeout", a.drainTimeout())
			return a.shutdown(sig)
		case <-successor:
			// The same path as SIGTERM (whatever it saves on the way out),
			// with the admin socket left to the successor first.
			log.Info("stopping: a successor took over the listening sockets; draining connections", "timeout", a.drainTimeout())
			a.admin.StopAccepting()
			return a.shutdown(sig)
		}
	}
}

// reloadFile re-reads the configuration for SIGHUP. A file with any error
// is rejected whole, each error logged with its line; the running
// configuration stays.
func (a *app) reloadFile(f *config.Flags) {
	next, err := config.Load(f.Path, f)
	if err != nil {
		var errs config.Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				a.log.Error("reload rejected: the running configuration stays", "file", e.File, "line", e.Line, "key", configfile.Clip(e.Key), "error", configfile.ClipWords(e.Msg))
			}
			return
		}
		a.log.Error("reload rejected: the running configuration stays", "err", err)
		return
	}
	rep, err := a.Reload(next)
	if err != nil {
		a.log.Error("reload failed part way", "err", err, "applied", rep.Applied)
		return
	}
	a.log.Info("reloaded", "file", f.Path, "applied", len(rep.Applied), "needs_restart", len(rep.Kept))
}

// shutdown drains within the drain timeout; another signal cancels the
// drain, dropping what is still in flight.
func (a *app) shutdown(sig <-chan os.Signal) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.drainTimeout())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Stop(ctx) }()
	for {
		select {
		case err := <-done:
			if err == nil {
				a.log.Info("stopped")
			}
			return err
		case v := <-sig:
			if v == syscall.SIGHUP {
				a.log.Info("reload ignored: stopping")
				continue
			}
			a.log.Warn("second signal: cutting the drain short", "signal", v.String())
			cancel()
			return <-done
		}
	}
}
