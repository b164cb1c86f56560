package main

import (
	"strings"
	"testing"
	"time"
)

func TestControlSection(t *testing.T) {
	good := writeFile(t, "good.toml", "[control]\netcd = [\"127.0.0.1:2379\"]\ndetection = \"3s\"\nprobe_interval = \"1s\"\nmax_moves = 0\n")
	s, err := loadSettings(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Control
	if !c.Enabled || !c.Leader || c.Detection != 3*time.Second || c.Probe != time.Second || c.MaxMoves != 0 ||
		c.SessionTTL != 5 || c.Grace != defaultGrace || len(c.Etcd) != 1 {
		t.Fatalf("resolved: %+v", c)
	}
	if s, _ := loadSettings("", nil); s.Control.Enabled {
		t.Fatal("control enabled without a [control] section")
	}
	bad := writeFile(t, "bad.toml", `[control]
etcd = ["nohostport"]
session_ttl = "1500ms"
probe_interval = "1s"
probe_timeout = "2s"
detection = "1s"
max_moves = -1
`)
	code, _, errOut := checkConfig(t, bad)
	for _, want := range []string{
		bad + `:2: control.etcd: entry 1 "nohostport": want host:port`,
		bad + ":3: control.session_ttl: 1.5s: want whole seconds",
		bad + ":5: control.probe_timeout: 2s: at most probe_interval",
		bad + ":6: control.detection: 1s: at least two probe intervals",
		bad + ":7: control.max_moves: -1",
	} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("want %q in:\n%s", want, errOut)
		}
	}
}
