package config

import (
	"log/slog"
	"strings"
	"testing"
)

// TestConvertFromErrors: a pool's convert_from table is judged by the
// pool, each problem at its own key and line, and a good one reaches the
// pool's Config.
func TestConvertFromErrors(t *testing.T) {
	const head = "[l2]\nservers = [\"127.0.0.1:1\", \"127.0.0.1:2\"]\ncompat = \"twemproxy\"\nmanaged = true\n[l2.convert_from]\n"
	for _, c := range []struct{ name, file, want string }{
		{"no compat", "[l2]\nservers = [\"127.0.0.1:1\"]\nmanaged = true\n[l2.convert_from]\ncompat = \"gomemcache\"\nservers = [\"127.0.0.1:1\"]\n",
			":4: l2.convert_from: converts to a compat layout: set compat"},
		{"not managed", "[l2]\nservers = [\"127.0.0.1:1\"]\ncompat = \"gomemcache\"\n[l2.convert_from]\ncompat = \"gomemcache\"\nservers = [\"127.0.0.1:1\"]\n",
			":4: l2.convert_from: a conversion is walked by the control plane: set managed"},
		{"scheme missing", head + "servers = [\"127.0.0.1:1\"]\n", ":5: l2.convert_from.compat: required"},
		{"no servers", head + "compat = \"gomemcache\"\n", ":5: l2.convert_from.servers: a pool needs at least one server"},
		{"unknown hash", head + "compat = \"twemproxy\"\nservers = [\"127.0.0.1:1\"]\n\nhash = \"sha1\"\n", ":9: l2.convert_from.hash: unknown hash \"sha1\""},
		{"random", head + "compat = \"twemproxy\"\ndistribution = \"random\"\nservers = [\"127.0.0.1:1\"]\n", ":7: l2.convert_from.distribution:"},
		{"a weight gomemcache lacks", head + "compat = \"gomemcache\"\nservers = [\"127.0.0.1:1:3\"]\n", ":7: l2.convert_from.servers:"},
		{"typo", head + "compat = \"gomemcache\"\nservers = [\"127.0.0.1:1\"]\nhsah = \"md5\"\n", ":8: l2.convert_from.hsah: unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "bad.toml", c.file)
			code, _, errOut := checkConfig(t, path)
			if code != 1 || !strings.Contains(errOut, path+c.want) {
				t.Fatalf("exit %d, stderr %q; want %q", code, errOut, path+c.want)
			}
		})
	}
	path := writeFile(t, "ok.toml", head+"compat = \"twemproxy\"\ndistribution = \"modula\"\nhash = \"md5\"\nservers = [\"127.0.0.1:1:2 a\"]\n")
	s, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf := s.L2.PoolConfig(1<<20, slog.Default()).ConvertFrom
	if cf == nil || cf.Compat != "twemproxy" || cf.Distribution != "modula" || cf.Hash != "md5" ||
		len(cf.Servers) != 1 || cf.Servers[0].Weight != 2 || cf.Servers[0].Name != "a" {
		t.Errorf("ConvertFrom %+v", cf)
	}
}
