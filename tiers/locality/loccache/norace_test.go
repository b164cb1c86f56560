//go:build !race

package loccache

const raceEnabled = false
