package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// linkPKI is a throwaway CA and one certificate per region, as PEM files
// an operator would point [locality] link_cert, link_key and link_ca at.
type linkPKI struct {
	dir string
	ca  string
}

// newLinkPKI writes the CA's certificate into a temporary directory.
func newLinkPKI(t *testing.T) (*linkPKI, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "strata test links CA"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(2 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &linkPKI{dir: t.TempDir()}
	p.ca = p.write(t, "ca.pem", "CERTIFICATE", der)
	return p, cert, key
}

func (p *linkPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue writes a certificate and key for name, valid on 127.0.0.1 as a
// server and as a client, signed by the CA; it returns their paths.
func (p *linkPKI) issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(2 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+".key", "PRIVATE KEY", kder)
}

func TestLocalityLinkTLSKeys(t *testing.T) {
	pki, ca, caKey := newLinkPKI(t)
	cert, key := pki.issue(t, ca, caKey, "a")
	good := writeFile(t, "tls.toml", "[locality]\nregion = \"a\"\nlink_listen = \"127.0.0.1:0\"\n"+
		"link_cert = \""+cert+"\"\nlink_key = \""+key+"\"\nlink_ca = \""+pki.ca+"\"\n")
	s, err := loadSettings(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := s.Locality.TLS
	if tl == nil || len(tl.server.Certificates) != 1 || tl.server.ClientCAs == nil || tl.client.RootCAs == nil || len(tl.client.Certificates) != 1 {
		t.Fatalf("link TLS: %+v", tl)
	}
	// One of three; a key that is not the certificate's; a CA file with
	// no certificate.
	_, otherKey := pki.issue(t, ca, caKey, "b")
	for _, c := range []struct{ body, want string }{
		{"link_cert = \"" + cert + "\"\n", ":4: locality.link_cert: mutual TLS on the links needs link_cert, link_key and link_ca together: link_key and link_ca missing"},
		{"link_cert = \"" + cert + "\"\nlink_key = \"" + otherKey + "\"\nlink_ca = \"" + pki.ca + "\"\n", ":4: locality.link_cert: tls: private key does not match public key"},
		{"link_cert = \"" + cert + "\"\nlink_key = \"" + key + "\"\nlink_ca = \"" + key + "\"\n", ":6: locality.link_ca: " + key + " holds no PEM certificate"},
	} {
		path := writeFile(t, "bad.toml", "[locality]\nregion = \"a\"\nlink_listen = \"127.0.0.1:0\"\n"+c.body)
		_, err := loadSettings(path, nil)
		if err == nil || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("want %q, got %v", path+c.want, err)
		}
	}
}
