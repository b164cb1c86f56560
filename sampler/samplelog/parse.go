package samplelog

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// wire mirrors the schema with pointers so a missing field is told apart
// from a zero one.
type wire struct {
	Time       *string `json:"time"`
	Op         *string `json:"op"`
	Key        *string `json:"key"`
	KeyB64     *string `json:"key_b64"`
	Family     *string `json:"family"`
	KeySize    *int    `json:"key_size"`
	ValueSize  *int    `json:"value_size"`
	Result     *string `json:"result"`
	Promoted   *bool   `json:"promoted"`
	Cluster    *string `json:"cluster"`
	Region     *string `json:"region"`
	SampleRate *uint64 `json:"sample_rate"`
}

// ErrMalformed is wrapped by every error ParseLine returns.
var ErrMalformed = errors.New("malformed record")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// ParseLine decodes one line (without its newline) into e. Required fields:
// time, op, key or key_b64, result, cluster and sample_rate. A missing
// key_size is the key's length; missing value_size, promoted, family and
// region are zero values (an empty family means "normalise the key").
func ParseLine(line []byte, e *Entry) error {
	var w wire
	if err := json.Unmarshal(line, &w); err != nil {
		return malformed("invalid JSON: %v", err)
	}
	switch {
	case w.Time == nil:
		return malformed("missing field %q", "time")
	case w.Op == nil:
		return malformed("missing field %q", "op")
	case w.Key == nil && w.KeyB64 == nil:
		return malformed("missing field %q", "key")
	case w.Result == nil:
		return malformed("missing field %q", "result")
	case w.Cluster == nil:
		return malformed("missing field %q", "cluster")
	case w.SampleRate == nil:
		return malformed("missing field %q", "sample_rate")
	}
	t, err := time.Parse(time.RFC3339Nano, *w.Time)
	if err != nil {
		return malformed("bad time %q", *w.Time)
	}
	op, ok := ParseOp(*w.Op)
	if !ok {
		return malformed("unknown op %q", *w.Op)
	}
	level, ok := parseResult(*w.Result)
	if !ok {
		return malformed("unknown result %q", *w.Result)
	}
	if *w.SampleRate == 0 {
		return malformed("sample_rate is 0")
	}
	*e = Entry{Time: t.UnixNano(), Op: op, Level: level, Cluster: *w.Cluster, SampleRate: *w.SampleRate}
	if w.Key != nil {
		e.Key = *w.Key
	} else {
		k, err := base64.StdEncoding.DecodeString(*w.KeyB64)
		if err != nil {
			return malformed("bad key_b64: %v", err)
		}
		e.Key = string(k)
	}
	e.KeySize = len(e.Key)
	if w.KeySize != nil {
		e.KeySize = *w.KeySize
	}
	if w.ValueSize != nil {
		e.ValueSize = *w.ValueSize
	}
	if e.KeySize < 0 || e.ValueSize < 0 {
		return malformed("negative size")
	}
	if w.Family != nil {
		e.Family = *w.Family
	}
	if w.Region != nil {
		e.Region = *w.Region
	}
	if w.Promoted != nil {
		e.Promoted = *w.Promoted
	}
	return nil
}
