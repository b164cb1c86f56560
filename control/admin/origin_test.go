package admin

import (
	"net/http/httptest"
	"testing"
)

func TestCrossOrigin(t *testing.T) {
	for _, c := range []struct {
		name, site, origin string
		refused            bool
	}{
		{"command-line client", "", "", false},
		{"the page itself", "same-origin", "http://127.0.0.1:11299", false},
		{"old browser, same origin", "", "http://127.0.0.1:11299", false},
		{"typed by the operator", "none", "", false},
		{"another site", "cross-site", "http://evil.example", true},
		{"another port of this host", "same-site", "http://127.0.0.1:8080", true},
		{"old browser, other origin", "", "http://127.0.0.1:8080", true},
		{"sandboxed frame", "", "null", true},
		{"forged same-origin header, other Origin", "same-origin", "http://evil.example", true},
	} {
		r := httptest.NewRequest("PUT", "http://127.0.0.1:11299/admin/v1/promotion", nil)
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := crossOrigin(r) != ""; got != c.refused {
			t.Errorf("%s: refused=%v, want %v (%q)", c.name, got, c.refused, crossOrigin(r))
		}
	}
}
