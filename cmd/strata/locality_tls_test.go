package main

import (
	"strings"
	"testing"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/tlstest"
)

// linkPKI is a throwaway CA and one certificate per region, as PEM files
// an operator would point [locality] link_cert, link_key and link_ca at.
type linkPKI struct {
	dir string
	ca  string // the CA certificate's path
	of  *tlstest.CA
}

func newLinkPKI(t *testing.T) *linkPKI {
	return &linkPKI{dir: t.TempDir(), of: tlstest.NewCA(t, "strata test links CA")}
}

// issue writes a certificate and key for name, valid on 127.0.0.1 as a
// server and as a client, signed by the CA; it returns their paths.
func (p *linkPKI) issue(t *testing.T, name string) (certPath, keyPath string) {
	t.Helper()
	p.ca, certPath, keyPath = p.of.WriteFiles(t, p.dir, name)
	return certPath, keyPath
}

func TestLocalityLinkTLSKeys(t *testing.T) {
	pki := newLinkPKI(t)
	cert, key := pki.issue(t, "a")
	good := writeFile(t, "tls.toml", "[locality]\nregion = \"a\"\nlink_listen = \"127.0.0.1:0\"\n"+
		"link_cert = \""+cert+"\"\nlink_key = \""+key+"\"\nlink_ca = \""+pki.ca+"\"\n")
	s, err := config.Load(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := s.Locality.TLS
	if tl == nil || len(tl.Server.Certificates) != 1 || tl.Server.ClientCAs == nil || tl.Client.RootCAs == nil || len(tl.Client.Certificates) != 1 {
		t.Fatalf("link TLS: %+v", tl)
	}
	// One of three; a key that is not the certificate's; a CA file with
	// no certificate.
	_, otherKey := pki.issue(t, "b")
	for _, c := range []struct{ body, want string }{
		{"link_cert = \"" + cert + "\"\n", ":4: locality.link_cert: mutual TLS on the links needs link_cert, link_key and link_ca together: link_key and link_ca missing"},
		{"link_cert = \"" + cert + "\"\nlink_key = \"" + otherKey + "\"\nlink_ca = \"" + pki.ca + "\"\n", ":4: locality.link_cert: tls: private key does not match public key"},
		{"link_cert = \"" + cert + "\"\nlink_key = \"" + key + "\"\nlink_ca = \"" + key + "\"\n", ":6: locality.link_ca: " + key + " holds no PEM certificate"},
	} {
		path := writeFile(t, "bad.toml", "[locality]\nregion = \"a\"\nlink_listen = \"127.0.0.1:0\"\n"+c.body)
		_, err := config.Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("want %q, got %v", path+c.want, err)
		}
	}
}
