package ctl

import (
	"context"
	"fmt"

	"github.com/strata-cache/strata/control/admin"
)

// runCtlLocality is `strata ctl locality ...`: a μ-shard's row, counters
// and history; a move; a pin; the moves in flight. A μ-shard is named as
// the admin API names it, "prefix field" (quote it for the shell).
func runCtlLocality(ctx context.Context, c *admin.Client, args []string) (any, error) {
	usage := func(form string) error { return fmt.Errorf("%w: locality %s", ErrUsage, form) }
	if len(args) == 0 {
		return nil, usage("show ID | migrate ID REGION | pin ID REGION | migrations")
	}
	switch args[0] {
	case "show":
		if len(args) != 2 {
			return nil, usage("show ID")
		}
		return c.MuShard(ctx, args[1])
	case "migrate":
		if len(args) != 3 {
			return nil, usage("migrate ID REGION")
		}
		return c.MigrateMuShard(ctx, args[1], args[2])
	case "pin":
		if len(args) != 3 {
			return nil, usage("pin ID REGION (\"\" unpins)")
		}
		return c.PinMuShard(ctx, args[1], args[2])
	case "migrations":
		if len(args) != 1 {
			return nil, usage("migrations")
		}
		ms, err := c.LocalityMigrations(ctx)
		if ms == nil {
			ms = []admin.Migration{}
		}
		return map[string][]admin.Migration{"migrations": ms}, err
	}
	return nil, usage("show|migrate|pin|migrations, not " + fmt.Sprintf("%q", args[0]))
}
