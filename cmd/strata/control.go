package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/control/locality/plane"
)

func init() {
	register("control", "run the shard-assignment loops of the managed tiers and the locality placement service, without a data plane", runControl)
}

// runControl is `strata control --config FILE`: a process of its own that
// campaigns for the loops of every tier with managed = true, and with
// [locality] for the placement service, on the etcd of [control]. It
// serves no client and ships no load; the strata serve processes of the
// fleet (leader = false, or true as standbys) do that. SIGTERM or SIGINT
// resigns and exits.
func runControl(args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("control", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "configuration `file` (the fleet's, with [control] etcd set)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: strata control --config FILE", errUsage)
	}
	s, err := config.Load(*path, nil)
	if err != nil {
		return err
	}
	if len(s.Control.Etcd) == 0 {
		return errors.New("strata control needs [control] etcd: with the in-memory store it would lead alone")
	}
	log, _ := newLogger(s.LogFormat, s.LogLevel, stderr)
	tiers, err := managedTiers(s, nil, log)
	if err != nil {
		return err
	}
	if len(tiers) == 0 && !s.Locality.Enabled {
		return errors.New("no tier has managed = true and there is no [locality]: nothing to control")
	}
	c := s.Control
	c.Leader, c.Enabled = true, true
	name := candidateName("control")
	var ss stores
	defer ss.release()
	cp, err := buildControl(&ss, c, tiers, name, log)
	if err != nil {
		return err
	}
	var lp *plane.Plane
	if s.Locality.Enabled {
		if lp, err = newLocalityControl(&ss, s, name, true, log); err != nil {
			if cp != nil {
				_ = cp.Stop(context.Background())
			}
			return err
		}
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if cp != nil {
		cp.Start()
	}
	if lp != nil {
		lp.Start()
	}
	log.Info("strata control running", "tiers", len(tiers), "locality", s.Locality.Enabled, "etcd", c.Etcd)
	v := <-sig
	log.Info("stopping", "signal", v.String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if lp != nil {
		errs = append(errs, lp.Stop(ctx))
	}
	if cp != nil {
		errs = append(errs, cp.Stop(ctx))
	}
	return errors.Join(errs...)
}
