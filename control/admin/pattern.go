package admin

import (
	"net/url"
	"strings"
)

// A route pattern is a path whose segments are literals or a "{name}"
// wildcard, such as /admin/v1/locality/mushards/{id}. A wildcard matches
// exactly one non-empty segment of the request's escaped path and yields
// it unescaped, so a μ-shard name holding a "/" (sent as %2F) stays one
// value instead of becoming two segments.

// isPattern reports whether route has a wildcard segment.
func isPattern(route string) bool { return strings.Contains(route, "{") }

// matchPath matches an escaped request path against pattern and sets
// each wildcard's value with set. It returns false, having called set for
// nothing, when the path does not match: other segment count, another
// literal, an empty or badly escaped wildcard segment.
func matchPath(pattern, escapedPath string, set func(name, value string)) bool {
	ps, rs := strings.Split(pattern, "/"), strings.Split(escapedPath, "/")
	if len(ps) != len(rs) {
		return false
	}
	var names, values []string
	for i, p := range ps {
		if len(p) > 2 && p[0] == '{' && p[len(p)-1] == '}' {
			v, err := url.PathUnescape(rs[i])
			if err != nil || v == "" {
				return false
			}
			names, values = append(names, p[1:len(p)-1]), append(values, v)
			continue
		}
		if p != rs[i] {
			return false
		}
	}
	for i, n := range names {
		set(n, values[i])
	}
	return true
}
