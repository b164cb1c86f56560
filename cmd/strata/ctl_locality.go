package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/strata-cache/strata/control/admin"
)

// runCtlLocality is `strata ctl locality ...`: a μ-shard's row, counters
// and history; a move; a pin; the moves in flight. A μ-shard is named as
// the admin API names it, "prefix field" (quote it for the shell).
func runCtlLocality(ctx context.Context, c *admin.Client, args []string) (any, error) {
	usage := func(form string) error { return fmt.Errorf("%w: locality %s", errUsage, form) }
	if len(args) == 0 {
		return nil, usage("show ID | migrate ID REGION | pin ID REGION | migrations")
	}
	path := func(id string) string { return "locality/mushards/" + url.PathEscape(id) }
	switch args[0] {
	case "show":
		if len(args) != 2 {
			return nil, usage("show ID")
		}
		return c.Raw(ctx, http.MethodGet, path(args[1]), nil)
	case "migrate":
		if len(args) != 3 {
			return nil, usage("migrate ID REGION")
		}
		return c.Raw(ctx, http.MethodPost, path(args[1])+"/migrate", map[string]string{"to": args[2]})
	case "pin":
		if len(args) != 3 {
			return nil, usage("pin ID REGION (\"\" unpins)")
		}
		return c.Raw(ctx, http.MethodPut, path(args[1])+"/pin", map[string]string{"region": args[2]})
	case "migrations":
		if len(args) != 1 {
			return nil, usage("migrations")
		}
		return c.Raw(ctx, http.MethodGet, "locality/migrations", nil)
	}
	return nil, usage("show|migrate|pin|migrations, not " + fmt.Sprintf("%q", args[0]))
}
