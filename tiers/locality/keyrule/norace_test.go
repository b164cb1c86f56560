//go:build !race

package keyrule

const raceEnabled = false
