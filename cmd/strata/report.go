package main

import "github.com/strata-cache/strata/sampler/report"

func init() {
	register("report", report.Summary, report.Run)
}
