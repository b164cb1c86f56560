package tlsconn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-cache/strata/internal/tlstest"
)

// TestFileErrorNamesTheFile: each way a file can be wrong is blamed on
// that file, which is what refresh_certs tells its caller.
func TestFileErrorNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "files")
	caPath, cert, key := ca.WriteFiles(t, dir, "server")
	_, otherCert, otherKey := tlstest.NewCA(t, "other").WriteFiles(t, t.TempDir(), "server")
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		name       string
		cfg        Config
		file, path string
	}{
		{"good", Config{Cert: cert, Key: key, CA: caPath}, "", ""},
		{"missing cert", Config{Cert: missing, Key: key}, FileCert, missing},
		{"junk cert", Config{Cert: junk, Key: key}, FileCert, junk},
		{"key only in cert file", Config{Cert: otherKey, Key: key}, FileCert, otherKey},
		{"missing key", Config{Cert: cert, Key: missing}, FileKey, missing},
		{"junk key", Config{Cert: cert, Key: junk}, FileKey, junk},
		{"key of another certificate", Config{Cert: otherCert, Key: key}, FileKey, key},
		{"junk ca", Config{Cert: cert, Key: key, CA: junk}, FileCA, junk},
		{"missing ca", Config{Cert: cert, Key: key, CA: missing}, FileCA, missing},
	} {
		_, err := load(c.cfg)
		var fe *FileError
		switch {
		case c.file == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.file == "":
		case !errors.As(err, &fe):
			t.Errorf("%s: %v is not a FileError", c.name, err)
		case fe.File != c.file || fe.Path != c.path:
			t.Errorf("%s: blamed %s %s, want %s %s", c.name, fe.File, fe.Path, c.file, c.path)
		}
		// A dialler reads its files the same way.
		d := Dial{On: true, Cert: c.cfg.Cert, Key: c.cfg.Key, CA: c.cfg.CA}
		if _, derr := d.Load(); (derr == nil) != (err == nil) {
			t.Errorf("%s: listener %v, dialler %v", c.name, err, derr)
		}
	}
}
