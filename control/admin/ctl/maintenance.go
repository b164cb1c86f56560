package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/strata-cache/strata/control/admin"
)

// `strata ctl maintenance` asks the admin server to walk the servers
// (POST /admin/v1/servers/maintenance; the steps are the admin package's)
// and follows the walk, printing each of its lines once, until it ends.
// A walk that outlasts --wait is cancelled, as is one whose command is
// interrupted while it waits.

// maintenanceControl is what the command needs of the admin API.
type maintenanceControl interface {
	StartMaintenance(ctx context.Context, req admin.MaintenanceRequest) (admin.MaintenanceStatus, error)
	Maintenance(ctx context.Context) (admin.MaintenanceStatus, error)
	CancelMaintenance(ctx context.Context) (admin.MaintenanceStatus, error)
}

var _ maintenanceControl = (*admin.Client)(nil)

// runMaintenance is `strata ctl maintenance [--all] TIER [ADDR]`.
func runMaintenance(ctx context.Context, c maintenanceControl, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("maintenance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "walk every server of the tier, one at a time")
	interval := fs.Duration("interval", admin.DefaultMaintenanceInterval, "how often the shard map is read")
	wait := fs.Duration("wait", time.Hour, "how long the whole walk may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if (*all && len(rest) != 1) || (!*all && len(rest) != 2) || *interval <= 0 || *wait <= 0 {
		return fmt.Errorf("%w: maintenance TIER HOST:PORT | maintenance --all TIER", ErrUsage)
	}
	req := admin.MaintenanceRequest{Tier: rest[0], All: *all, Interval: admin.Duration(*interval)}
	if !*all {
		req.Addr = rest[1]
	}
	st, err := c.StartMaintenance(ctx, req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	seen := 0
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		for _, n := range st.Notes {
			if n.Seq > seen {
				fmt.Fprintf(stdout, "%s %s\n", n.At.Local().Format(time.TimeOnly), n.Line)
				seen = n.Seq
			}
		}
		if !st.Running {
			if st.Error != "" {
				return errors.New(st.Error)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			// Cancelled here, cancelled there: the operator sees the
			// walk end where the server stands.
			cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer ccancel()
			_, _ = c.CancelMaintenance(cctx)
			return fmt.Errorf("%s: maintenance not finished (%s): %w", st.Addr, st.Step, ctx.Err())
		case <-tick.C:
		}
		// A read cut by --wait keeps the last status: the wait's end
		// cancels the walk above, rather than a zero status ending it
		// as a success.
		next, err := c.Maintenance(ctx)
		switch {
		case err == nil:
			st = next
		case ctx.Err() == nil:
			return err
		}
	}
}
