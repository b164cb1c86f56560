//go:build !race

package locsvc

const raceEnabled = false
