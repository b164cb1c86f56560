package main

import "github.com/strata-cache/strata/config"

func init() {
	register("config", config.Summary, config.Command)
}
