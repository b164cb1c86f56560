package tlsconn

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// Which file a FileError is about, the three memcached's refresh_certs
// tells apart.
const (
	FileCert = "cert" // the certificate chain
	FileKey  = "key"  // the private key, or a key that does not match the certificate
	FileCA   = "ca"   // the authorities' bundle
)

// FileError is a certificate file that could not be used: Store.Reload,
// NewStore and Dial.Load refuse with one, so a caller can say which file
// failed in its own words (memcached's refresh_certs reply, a log line).
type FileError struct {
	File string // FileCert, FileKey or FileCA
	Path string
	Err  error
}

func (e *FileError) Error() string { return "tls: " + e.File + " " + e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// readPair reads a certificate chain and its key. A chain with no
// parsable certificate is the cert file's fault; any other refusal of the
// pair (no key, a key for another certificate) is the key file's, as
// memcached reports it.
func readPair(cert, key string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(cert)
	if err != nil {
		return tls.Certificate{}, &FileError{File: FileCert, Path: cert, Err: err}
	}
	leaf, err := firstCert(certPEM)
	if err != nil {
		return tls.Certificate{}, &FileError{File: FileCert, Path: cert, Err: err}
	}
	keyPEM, err := os.ReadFile(key)
	if err != nil {
		return tls.Certificate{}, &FileError{File: FileKey, Path: key, Err: err}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, &FileError{File: FileKey, Path: key, Err: err}
	}
	pair.Leaf = leaf
	return pair, nil
}

// firstCert parses the first CERTIFICATE block of a PEM chain.
func firstCert(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM certificate in it")
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
}

// readPool reads a PEM bundle of authorities.
func readPool(ca string) (*x509.CertPool, error) {
	b, err := os.ReadFile(ca)
	if err != nil {
		return nil, &FileError{File: FileCA, Path: ca, Err: err}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, &FileError{File: FileCA, Path: ca, Err: fmt.Errorf("no PEM certificate in it")}
	}
	return pool, nil
}
