package proxy_test

// raceEnabled is set by race_test.go when the race detector is on.
var raceEnabled bool
