package admin

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// TestTLSMetricsBySide: handshakes and failures carry their side; a side
// counted in two places (a link's listener and its dialler) is added up;
// a side without TLS exports nothing.
func TestTLSMetricsBySide(t *testing.T) {
	st := newState()
	expiry := time.Unix(1_900_000_000, 0)
	st.snap.AddTLS(10, map[string]uint64{tlsconn.ReasonPlaintext: 2}, expiry)
	st.snap.AddTLSHandshakes(tlsconn.SideLink, tlsconn.Tally{Handshakes: 3, Errors: map[string]uint64{tlsconn.ReasonBadClientCert: 1}})
	st.snap.AddTLSHandshakes(tlsconn.SideLink, tlsconn.Tally{Handshakes: 4, Errors: map[string]uint64{tlsconn.ReasonTimeout: 1}})
	s := startServer(t, Config{}, st)
	fams := parseMetrics(t, do(t, s, "GET", "/metrics", "", "").body)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"strata_tls_handshakes_total", map[string]string{"side": "client"}, 10},
		{"strata_tls_handshakes_total", map[string]string{"side": "link"}, 7},
		{"strata_tls_handshake_errors_total", map[string]string{"side": "client", "reason": "plaintext"}, 2},
		{"strata_tls_handshake_errors_total", map[string]string{"side": "client", "reason": "timeout"}, 0},
		{"strata_tls_handshake_errors_total", map[string]string{"side": "link", "reason": "bad_client_cert"}, 1},
		{"strata_tls_handshake_errors_total", map[string]string{"side": "link", "reason": "timeout"}, 1},
		{"strata_tls_cert_expiry_timestamp_seconds", nil, 1_900_000_000},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, m := range fams["strata_tls_handshakes_total"].Metric {
		if m.Label[0].GetValue() == tlsconn.SideBackend {
			t.Error("the backend side exported without a pool running TLS")
		}
	}
}
