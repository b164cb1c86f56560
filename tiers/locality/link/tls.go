package link

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/strata-cache/strata/tiers/memcached"
)

// TLSFiles names the PEM files of the links' mutual TLS: this strata's
// certificate and key, and the CA its peers' certificates chain to.
type TLSFiles struct {
	Cert, Key, CA string
}

// FieldError is a refused value of one field, named by its Go name
// ("Cert", "CA").
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "link: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// LoadTLS loads f into the two sides of a link's mutual TLS. The
// certificate is presented both ways (server to the peers that dial in,
// client to the peers this strata dials), so it must be valid for both
// uses; the CA verifies the peers' certificates both ways. A file that
// cannot be used is a *FieldError: "Cert" for the key pair, "CA" for the
// authority.
func LoadTLS(f TLSFiles) (server, client *tls.Config, err error) {
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, nil, &FieldError{Field: "Cert", Err: err}
	}
	ca, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, nil, &FieldError{Field: "CA", Err: err}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, nil, &FieldError{Field: "CA", Err: fmt.Errorf("%s holds no PEM certificate", f.CA)}
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	client = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool}
	return server, client, nil
}

// CheckAddress reports whether addr can be dialled as a peer's link: a
// link is dialled as a memcached server is (memcached.CheckAddress).
func CheckAddress(addr string) error { return memcached.CheckAddress(addr) }

// CheckListen reports whether addr can be the link listener's address:
// host:port, where an empty host is every interface and port 0 any free
// port.
func CheckListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port", addr)
	}
	if port == "" {
		return fmt.Errorf("%q: missing port", addr)
	}
	return nil
}
