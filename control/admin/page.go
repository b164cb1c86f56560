package admin

import (
	_ "embed"
	"net/http"
)

// pageHTML is the operator's page: one file, no external assets, so it
// works on a host without internet access. It reads and tunes through the
// same /admin/v1 endpoints as strata ctl, with the token the operator types
// in (kept in the tab's sessionStorage only).
//
//go:embed page.html
var pageHTML []byte

func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:")
	_, _ = w.Write(pageHTML)
}
