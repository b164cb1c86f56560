package hotmarks

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/strata-cache/strata/tiers/hotkeys"
)

// RowPrefix is where marks live in the store: one row per key,
// RowPrefix + key.
const RowPrefix = "hotkeys/marks/"

// maxKey is memcached's key limit: no client can name a longer key, so a
// longer one in a row is not a mark.
const maxKey = 250

// rowValue is a mark's row value: JSON, so that an operator reads marks
// with etcdctl. Unknown fields are ignored, so a newer strata may add some.
type rowValue struct {
	Kind  string `json:"kind"`
	K     int    `json:"k"`
	Since int64  `json:"since"`
	Seen  int64  `json:"seen"`
}

func encodeMark(m hotkeys.Mark) []byte {
	b, _ := json.Marshal(rowValue{Kind: m.Kind.String(), K: m.K, Since: m.Since, Seen: m.Seen})
	return b
}

// decodeMark reads the row value of key's mark.
func decodeMark(key string, value []byte) (hotkeys.Mark, error) {
	var v rowValue
	if err := json.Unmarshal(value, &v); err != nil {
		return hotkeys.Mark{}, fmt.Errorf("hotmarks: row %q: %w", key, err)
	}
	kind, err := hotkeys.ParseKind(v.Kind)
	if err != nil {
		return hotkeys.Mark{}, fmt.Errorf("hotmarks: row %q: %w", key, err)
	}
	m := hotkeys.Mark{Key: key, Kind: kind, K: v.K, Since: v.Since, Seen: v.Seen}
	if err := check(m); err != nil {
		return hotkeys.Mark{}, err
	}
	return m, nil
}

// check rejects a mark that no rule could have made.
func check(m hotkeys.Mark) error {
	switch {
	case m.Key == "" || len(m.Key) > maxKey:
		return fmt.Errorf("hotmarks: key of %d bytes: want 1 to %d", len(m.Key), maxKey)
	case m.Kind.String() == "unknown":
		return fmt.Errorf("hotmarks: key %q: unknown kind %d", m.Key, m.Kind)
	case m.K < 2 || m.K > hotkeys.MaxSplit:
		return fmt.Errorf("hotmarks: key %q: K %d: want 2 to %d", m.Key, m.K, hotkeys.MaxSplit)
	case m.Since > m.Seen:
		return fmt.Errorf("hotmarks: key %q: since %d after seen %d", m.Key, m.Since, m.Seen)
	}
	return nil
}

// merge folds a newer report m of a key into the pending one: the
// earliest Since, the latest Seen, and the kind and K of the latest.
func merge(old, m hotkeys.Mark) hotkeys.Mark {
	if old.Seen > m.Seen {
		old, m = m, old
	}
	m.Since = min(old.Since, m.Since)
	return m
}

// toWrite is what a write of pending does at now, a pure decision: the
// marks in key order, without those last seen more than hold ago (they
// cooled down while waiting for the store), each keeping the Since of the
// shared copy (have) when that is earlier. now 0 is a time not known yet:
// nothing has cooled.
func toWrite(pending, have map[string]hotkeys.Mark, now, hold int64) []hotkeys.Mark {
	out := make([]hotkeys.Mark, 0, len(pending))
	for k, m := range pending {
		if now != 0 && now-m.Seen > hold {
			continue
		}
		if h, ok := have[k]; ok && h.Since < m.Since {
			m.Since = h.Since
		}
		out = append(out, m)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out
}
