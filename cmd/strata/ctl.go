package main

import "github.com/strata-cache/strata/control/admin/ctl"

func init() {
	register("ctl", ctl.Summary, ctl.Run)
}
