package tlsconn

import (
	"crypto/tls"
	"net"
)

// Dial is a dialler's TLS material (a pool reaching memcached -Z): the
// zero value is plaintext.
type Dial struct {
	// On turns TLS on.
	On bool
	// CA is a PEM bundle the server's certificate must chain to; empty:
	// the system's roots.
	CA string
	// Cert and Key, both or neither, are the client certificate, for a
	// server that verifies its clients (memcached's ssl_verify_mode).
	Cert, Key string
	// ServerName is the name the server's certificate is checked against;
	// empty: the host of the address dialled.
	ServerName string
}

// Validate checks the fields; the files are read by Load.
func (d Dial) Validate() error {
	if !d.On {
		if d.CA != "" || d.Cert != "" || d.Key != "" || d.ServerName != "" {
			return fieldErr("On", "ca, cert, key or server_name without tls = true")
		}
		return nil
	}
	if (d.Cert == "") != (d.Key == "") {
		return fieldErr("Cert", "cert and key go together")
	}
	return nil
}

// Load reads the files into a client configuration; nil when TLS is off.
// The session cache lets reconnections resume.
func (d Dial) Load() (*tls.Config, error) {
	if !d.On {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: d.ServerName,
		ClientSessionCache: tls.NewLRUClientSessionCache(256)}
	if d.CA != "" {
		pool, err := readPool(d.CA)
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	if d.Cert != "" {
		pair, err := readPair(d.Cert, d.Key)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ForAddr returns cfg with ServerName set to addr's host when cfg names
// none, as crypto/tls.Dial does.
func ForAddr(cfg *tls.Config, addr string) *tls.Config {
	if cfg.ServerName != "" {
		return cfg
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	c := cfg.Clone()
	c.ServerName = host
	return c
}

// Handoff is a dialled socket whose handshake completed, handed to an
// event loop's Attach as a net.Conn: the loop enrols Socket and processes
// Session's records. Its net.Conn methods are the socket's.
type Handoff struct {
	net.Conn
	Session *Conn
}
