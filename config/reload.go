package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
)

// Report says what a reload did.
type Report struct {
	Applied []string // settings changed live
	Kept    []string // settings that changed in the file but need a restart
}

// Reload is one reload in progress: the configuration in force (Cur),
// the one just read (Next), and Merged, what will be in force: Cur with
// the live changes copied over from Next. The composer commits Merged
// even when a change fails half way, so that it always describes what
// runs. Each component's step calls Live for what it changes live and
// Keep for what needs a restart; both log what they report.
type Reload struct {
	Cur, Next, Merged *Settings
	Rep               Report
	Log               *slog.Logger
}

// Applied records a setting changed live.
func (r *Reload) Applied(what string, from, to any) {
	r.Rep.Applied = append(r.Rep.Applied, what)
	r.Log.Info("reload: changed", "setting", what, "from", from, "to", to)
}

// Kept records a setting that changed in the file but needs a restart.
func (r *Reload) Kept(what string, from, to any) {
	r.Rep.Kept = append(r.Rep.Kept, what)
	r.Log.Warn("reload: needs a restart; keeping the running value", "setting", what, "running", from, "file", to)
}

// Live applies one setting that changes live when its value in the file
// changed: set applies it to the running component and, once that
// succeeded, copies it into r.Merged. from is the running value, to the
// file's; they are logged, so a secret is never one of them. An error
// names the setting and stops the reload.
func (r *Reload) Live(what string, changed bool, from, to any, set func() error) error {
	if !changed {
		return nil
	}
	if err := set(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	r.Applied(what, from, to)
	return nil
}

// Keep reports a setting that needs a restart when its value in the file
// changed. Sections are passed through AsJSON, which the log shows.
func (r *Reload) Keep(what string, from, to any) {
	if !reflect.DeepEqual(from, to) {
		r.Kept(what, from, to)
	}
}

// AsJSON renders a settings section for a log line.
func AsJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// ServerList renders a pool's servers for a log line.
func ServerList(ss []ServerEntry) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
		if s.Weight != 1 {
			out[i] += fmt.Sprintf("(weight %d)", s.Weight)
		}
	}
	return out
}
