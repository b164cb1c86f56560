package admin

import (
	"embed"
	"net/http"
)

// static is the operator's page: an HTML shell, one stylesheet and one
// script, all in the binary, no CDN and no external font, so it works on a
// host without internet access. The script reads and tunes through the
// same /admin/v1 endpoints as strata ctl, with the token the operator
// types in (kept in the tab's sessionStorage only), and draws every chart
// itself as SVG.
//
//go:embed static
var static embed.FS

// pageCSP allows the page's own script, style and API calls and nothing
// else: no inline script, no other origin, no framing by another page.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	s.static("index.html", "text/html; charset=utf-8")(w, r)
}

// static serves one embedded file.
func (s *Server) static(name, contentType string) http.HandlerFunc {
	body, err := static.ReadFile("static/" + name)
	if err != nil {
		panic("admin: embedded page file missing: " + name) // a build defect, caught by every test
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		_, _ = w.Write(body)
	}
}
