//go:build race

package proxy_test

func init() { raceEnabled = true }
