package link_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/tiers/locality/link"
)

// TestLoadTLSNamesTheFileAtFault: a key pair that does not load is the
// certificate's field, a CA file without a certificate the CA's, so a
// configuration reader can place each at its key.
func TestLoadTLSNamesTheFileAtFault(t *testing.T) {
	ca := tlstest.NewCA(t, "link test CA")
	dir := t.TempDir()
	caPath, cert, key := ca.WriteFiles(t, dir, "a")
	_, _, otherKey := ca.WriteFiles(t, dir, "b")
	server, client, err := link.LoadTLS(link.TLSFiles{Cert: cert, Key: key, CA: caPath})
	if err != nil || server.ClientCAs == nil || len(server.Certificates) != 1 || client.RootCAs == nil || len(client.Certificates) != 1 {
		t.Fatalf("load: %v", err)
	}
	for _, c := range []struct {
		files link.TLSFiles
		field string
	}{
		{link.TLSFiles{Cert: cert, Key: otherKey, CA: caPath}, "Cert"},
		{link.TLSFiles{Cert: cert, Key: key, CA: key}, "CA"},
		{link.TLSFiles{Cert: cert, Key: key, CA: dir + "/none"}, "CA"},
	} {
		_, _, err := link.LoadTLS(c.files)
		var fe *link.FieldError
		if !errors.As(err, &fe) || fe.FieldName() != c.field {
			t.Errorf("%+v: %v, want a refusal of %s", c.files, err, c.field)
		}
	}
}

func TestAddresses(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:1": "", "nohost": "want host:port", ":1": "empty host", "h:0": "port must be", "h:x": "port must be"} {
		if err := link.CheckAddress(addr); (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckAddress(%q) = %v, want %q", addr, err, want)
		}
	}
	for addr, want := range map[string]string{"127.0.0.1:0": "", ":11311": "", "nohost": "want host:port", "h:": "missing port"} {
		if err := link.CheckListen(addr); (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckListen(%q) = %v, want %q", addr, err, want)
		}
	}
}
