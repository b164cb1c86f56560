package locsvc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Result is what the placement leader did with a manual move request.
type Result uint8

// The results; the values are the stored encoding.
const (
	// Refused: the leader dropped the request (the μ-shard was moving, a
	// pin names another region, the region is unknown, or it is there
	// already). Reason says which.
	Refused Result = iota + 1
	// Waiting: the leader holds the request and decides on it again at
	// Until ("return_wait": the μ-shard left that region less than
	// MaxTTL + Grace ago, and values it left there may still live).
	Waiting
	// Started: the move of epoch Epoch to To started At.
	Started
)

var resultNames = [...]string{Refused: "refused", Waiting: "waiting", Started: "started"}

func (r Result) String() string {
	if r >= Refused && r <= Started {
		return resultNames[r]
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Outcome is the row outcomes/<name>: what the placement leader did with
// the last manual request to move the μ-shard name. The leader that
// decided writes it (fenced on its leadership); the admin view deletes it
// when it records a new request, so a row describes the latest request
// once the leader has decided on it.
type Outcome struct {
	To     string
	Result Result
	// Reason: why it was refused or is waiting ("return_wait",
	// "not_stable", "pinned to <region>", "unknown region",
	// "already_owner"), or the move's reason when Started ("manual",
	// "pin").
	Reason string
	// At is when the leader decided (its clock); Until, for Waiting, when
	// it decides again (zero otherwise).
	At, Until time.Time
	// Epoch: the move's epoch when Started, else the row's epoch the
	// decision was taken on.
	Epoch uint64
}

// The encoding, version 1:
//
//	'O' 1 result varint(at) varint(until) uvarint(epoch) str(to) str(reason)
//
// with times in unix milliseconds, 0 for the zero time.
const (
	outcomeMagic   = 'O'
	outcomeVersion = 1
)

var errOutcome = errors.New("locsvc: corrupt move outcome")

// EncodeOutcome returns the outcome's row value.
func EncodeOutcome(o Outcome) []byte {
	b := make([]byte, 0, 3+30+2+len(o.To)+len(o.Reason))
	b = append(b, outcomeMagic, outcomeVersion, byte(o.Result))
	b = binary.AppendVarint(b, unixMilli(o.At))
	b = binary.AppendVarint(b, unixMilli(o.Until))
	b = binary.AppendUvarint(b, o.Epoch)
	b = binary.AppendUvarint(b, uint64(len(o.To)))
	b = append(b, o.To...)
	b = binary.AppendUvarint(b, uint64(len(o.Reason)))
	return append(b, o.Reason...)
}

// DecodeOutcome parses a row value written by EncodeOutcome; anything
// else is an error. Times come back in UTC, to the millisecond.
func DecodeOutcome(v []byte) (Outcome, error) {
	if len(v) < 3 || v[0] != outcomeMagic || v[1] != outcomeVersion {
		return Outcome{}, fmt.Errorf("%w: header", errOutcome)
	}
	o := Outcome{Result: Result(v[2])}
	if o.Result < Refused || o.Result > Started {
		return Outcome{}, fmt.Errorf("%w: result %d", errOutcome, v[2])
	}
	d := v[3:]
	var times [2]time.Time
	for i := range times {
		ms, k := binary.Varint(d)
		if k <= 0 {
			return Outcome{}, fmt.Errorf("%w: time", errOutcome)
		}
		d = d[k:]
		if ms != 0 {
			times[i] = time.UnixMilli(ms).UTC()
		}
	}
	o.At, o.Until = times[0], times[1]
	var k int
	if o.Epoch, k = binary.Uvarint(d); k <= 0 {
		return Outcome{}, fmt.Errorf("%w: epoch", errOutcome)
	}
	d = d[k:]
	var ok bool
	if o.To, d, ok = str(d); !ok || o.To == "" {
		return Outcome{}, fmt.Errorf("%w: region", errOutcome)
	}
	if o.Reason, d, ok = str(d); !ok {
		return Outcome{}, fmt.Errorf("%w: reason", errOutcome)
	}
	if len(d) != 0 {
		return Outcome{}, fmt.Errorf("%w: %d trailing bytes", errOutcome, len(d))
	}
	return o, nil
}

// unixMilli is t in unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
