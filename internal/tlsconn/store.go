package tlsconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"sync/atomic"
	"time"
)

// Store holds a listener's certificate material and the handshake
// counters. Reload replaces the material whole or not at all; sessions
// already open keep what they negotiated. Its methods are safe from any
// goroutine.
type Store struct {
	cfg  Config
	base *tls.Config // what the listener hands crypto/tls; reads cur per handshake
	cur  atomic.Pointer[material]

	counts Counts // the listener's handshakes
}

// material is one reading of the files.
type material struct {
	tls    *tls.Config
	leaf   *x509.Certificate
	loaded time.Time
}

// NewStore validates cfg (after SetDefaults) and reads its files.
func NewStore(cfg Config) (*Store, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, errors.New("tls: no certificate configured")
	}
	s := &Store{cfg: cfg}
	m, err := load(cfg)
	if err != nil {
		return nil, err
	}
	s.cur.Store(m)
	// The base config carries the session-ticket keys (crypto/tls makes
	// and rotates them on the base, and uses them for the configs
	// GetConfigForClient returns), so resumption survives a Reload.
	s.base = &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.cur.Load().tls, nil
		},
	}
	return s, nil
}

// load reads cert, key and CA into a server config; a refused file is a
// *FileError.
func load(cfg Config) (*material, error) {
	pair, err := readPair(cfg.Cert, cfg.Key)
	if err != nil {
		return nil, err
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if cfg.CA != "" {
		pool, err := readPool(cfg.CA)
		if err != nil {
			return nil, err
		}
		c.ClientCAs, c.RootCAs = pool, pool
	}
	switch cfg.Verify {
	case VerifyRequest:
		c.ClientAuth = tls.VerifyClientCertIfGiven
	case VerifyRequire:
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return &material{tls: c, leaf: pair.Leaf, loaded: time.Now()}, nil
}

// Reload reads the files again. On any error the material in force stays
// and the error, a *FileError, says which file failed.
func (s *Store) Reload() error {
	m, err := load(s.cfg)
	if err != nil {
		return err
	}
	s.cur.Store(m)
	return nil
}

// ServerConfig is the configuration a listener handshakes with: every
// handshake reads the material in force at that moment.
func (s *Store) ServerConfig() *tls.Config { return s.base }

// HandshakeTimeout is Config.HandshakeTimeout.
func (s *Store) HandshakeTimeout() time.Duration { return s.cfg.HandshakeTimeout }

// Leaf is the certificate presented now.
func (s *Store) Leaf() *x509.Certificate { return s.cur.Load().leaf }

// Counted records a handshake's outcome: err nil for a success.
func (s *Store) Counted(err error) { s.counts.Count(err, true) }

// Stats is a reading of the counters and the certificate in force.
type Stats struct {
	Handshakes uint64            // attempted
	Errors     map[string]uint64 // failed, by reason (every reason present)
	NotAfter   time.Time         // the certificate's expiry
	Serial     string            // its serial number, in hex
}

// Stats reads the counters.
func (s *Store) Stats() Stats {
	t := s.counts.Read()
	st := Stats{Handshakes: t.Handshakes, Errors: t.Errors}
	leaf := s.Leaf()
	st.NotAfter, st.Serial = leaf.NotAfter, leaf.SerialNumber.Text(16)
	return st
}
