package loctable

import (
	"fmt"
	"regexp"
)

// prefixRE: a relative path ending in '/' (the store puts its own
// namespace before it), so the table's keys (rows/, journal/, ...) never
// run into another prefix.
var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/$`)

// CheckPrefix reports whether prefix may hold the locality state: a
// relative path of letters, digits, '_', '-' and '.' ending in '/', such
// as DefaultPrefix. Every user of the prefix checks it here.
func CheckPrefix(prefix string) error {
	if !prefixRE.MatchString(prefix) {
		return fmt.Errorf("%q: want a path ending in '/', e.g. %q", prefix, DefaultPrefix)
	}
	return nil
}
