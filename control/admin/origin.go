package admin

import (
	"net/http"
	"net/url"
	"strings"
)

// mutating reports whether a request can change a setting: every method
// but the safe ones.
func mutating(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// crossOrigin reports why a mutating request came from a page of another
// origin, or "" when it did not. A browser names the page that sent a
// request in Sec-Fetch-Site (modern browsers) and Origin (every browser,
// on every non-GET fetch); a command-line client such as strata ctl sends
// neither and is judged by its token alone. The token does not replace
// this check: the page keeps it in sessionStorage, and another page the
// operator opens must not be able to ride on a login in some other way
// (a token-less loopback admin is the default).
func crossOrigin(r *http.Request) string {
	switch site := strings.ToLower(r.Header.Get("Sec-Fetch-Site")); site {
	case "", "same-origin", "none":
		// "none": the operator typed or bookmarked the request.
	default:
		return "Sec-Fetch-Site is " + site
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		// "null" (a sandboxed frame, a file) or garbage: not this server.
		return "Origin " + origin + " is not this server"
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return "Origin " + origin + " is not this server (" + r.Host + ")"
	}
	return ""
}
