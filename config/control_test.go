package config

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/shards"
)

func TestControlSection(t *testing.T) {
	good := writeFile(t, "good.toml", "[control]\netcd = [\"127.0.0.1:2379\"]\ndetection = \"3s\"\nprobe_interval = \"1s\"\nmax_moves = 0\nmaintenance_grace = \"45s\"\n")
	s, err := Load(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Control
	if !c.Enabled || !c.Leader || c.Detection != 3*time.Second || c.Probe != time.Second || c.MaxMoves != 0 ||
		c.SessionTTL != 5 || c.Grace != shards.DefaultGrace || c.Maint != 45*time.Second || len(c.Etcd) != 1 || c.MaxReplicas != 1 || c.ReplicaBand.High != 20000 {
		t.Fatalf("resolved: %+v", c)
	}
	scaled := writeFile(t, "scaled.toml", "[control]\nreplica_band = [100, 400]\nmax_replicas = 3\n")
	if s, err := Load(scaled, nil); err != nil || s.Control.MaxReplicas != 3 || s.Control.ReplicaBand.Low != 100 || s.Control.ReplicaBand.High != 400 {
		t.Fatalf("integer band: %v %+v", err, s.Control)
	}
	if s, _ := Load("", nil); s.Control.Enabled {
		t.Fatal("control enabled without a [control] section")
	}
	bad := writeFile(t, "bad.toml", `[control]
etcd = ["nohostport"]
session_ttl = "1500ms"
probe_interval = "1s"
probe_timeout = "2s"
detection = "1s"
max_moves = -1
replica_band = [300.0, 400.0]
max_replicas = 0
`)
	code, _, errOut := checkConfig(t, bad)
	for _, want := range []string{
		bad + `:2: control.etcd: entry 1 "nohostport": want host:port`,
		bad + ":3: control.session_ttl: 1.5s: want whole seconds",
		bad + ":5: control.probe_timeout: 2s: at most the probe interval (1s)",
		bad + ":6: control.detection: 1s: at least two probe intervals",
		bad + ":7: control.max_moves: -1",
		bad + ":8: control.replica_band: [300, 400]: want 0 <= low < high/2",
		bad + ":9: control.max_replicas: 0: want 1 (scaling off)",
	} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("want %q in:\n%s", want, errOut)
		}
	}
}
