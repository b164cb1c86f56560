//go:build race

package loccache

const raceEnabled = true
