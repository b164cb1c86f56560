//go:build race

package keyrule

const raceEnabled = true
