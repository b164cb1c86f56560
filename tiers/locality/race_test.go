//go:build race

package locality_test

const raceEnabled = true
