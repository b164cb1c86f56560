package admin

import (
	"net/http/httptest"
	"net/url"
	"strings"
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

// FuzzCrossOrigin feeds arbitrary Origin and Sec-Fetch-Site headers to the
// check. Properties: it never panics; a browser's same-origin request
// (Origin naming this host, Sec-Fetch-Site same-origin or absent) passes;
// any other Sec-Fetch-Site is refused whatever the Origin; an Origin whose
// host is not this one is refused.
func FuzzCrossOrigin(f *testing.F) {
	const host = "127.0.0.1:11299"
	// Seeds: the page itself, a typed request, another port, another
	// site, a sandboxed frame, an Origin with a path and one with userinfo
	// that names this host after an @.
	f.Add("http://127.0.0.1:11299", "same-origin")
	f.Add("", "none")
	f.Add("http://127.0.0.1:8080", "same-site")
	f.Add("https://evil.example", "cross-site")
	f.Add("null", "")
	f.Add("http://127.0.0.1:11299/x?y", "")
	f.Add("http://evil@127.0.0.1:11299", "")
	f.Add("http://127.0.0.1:11299@evil.example", "")
	f.Fuzz(func(t *testing.T, origin, site string) {
		r := httptest.NewRequest("PUT", "http://"+host+"/admin/v1/promotion", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", site)
		why := crossOrigin(r)
		s := strings.ToLower(site)
		if s != "" && s != "same-origin" && s != "none" && why == "" {
			t.Fatalf("Sec-Fetch-Site %q passed", site)
		}
		if origin == "http://"+host && (s == "" || s == "same-origin") && why != "" {
			t.Fatalf("same-origin request refused: %s", why)
		}
		if origin != "" && why == "" {
			u, err := url.Parse(origin)
			if err != nil || !strings.EqualFold(u.Host, host) {
				t.Fatalf("Origin %q of another host passed", origin)
			}
		}
	})
}
