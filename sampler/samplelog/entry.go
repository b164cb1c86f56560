package samplelog

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"
)

// Op is the kind of access a record describes.
type Op uint8

const (
	OpGet    Op = iota // get, gets, gat, gats, mg: a read through the tiers
	OpSet              // set, add, replace, append, prepend, cas, ms
	OpDelete           // delete, md
	OpArith            // incr, decr, ma
	OpTouch            // touch
	numOps
)

var opNames = [numOps]string{"get", "set", "delete", "arith", "touch"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// ParseOp is the inverse of Op.String.
func ParseOp(s string) (Op, bool) {
	for i, n := range opNames {
		if n == s {
			return Op(i), true
		}
	}
	return 0, false
}

// Result names, from the Level of a record (0 miss, 1 L1 hit, 2 L2 hit).
const (
	ResultL1Hit = "l1_hit"
	ResultL2Hit = "l2_hit"
	ResultMiss  = "miss"
	ResultNone  = "none"
)

// ResultName spells the outcome of an access: the tier that answered it, a
// miss for a read nothing answered, none for a write.
func ResultName(op Op, level uint8) string {
	switch {
	case level == 1:
		return ResultL1Hit
	case level >= 2:
		return ResultL2Hit
	case op == OpGet:
		return ResultMiss
	default:
		return ResultNone
	}
}

func parseResult(s string) (uint8, bool) {
	switch s {
	case ResultL1Hit:
		return 1, true
	case ResultL2Hit:
		return 2, true
	case ResultMiss, ResultNone:
		return 0, true
	}
	return 0, false
}

// Entry is one sampled access.
type Entry struct {
	Time       int64 // Unix nanoseconds (microsecond precision once written)
	Op         Op
	Key        string
	Family     string
	KeySize    int
	ValueSize  int
	Level      uint8 // 0 miss or none, 1 L1 hit, 2 L2 hit
	Promoted   bool
	Cluster    string
	Region     string
	SampleRate uint64
}

// TimeLayout is the format of the time field.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// AppendJSON appends e as one JSON object and a newline.
func AppendJSON(dst []byte, e *Entry) []byte {
	dst = append(dst, `{"time":"`...)
	dst = time.Unix(0, e.Time).UTC().AppendFormat(dst, TimeLayout)
	dst = append(dst, `","op":"`...)
	dst = append(dst, e.Op.String()...)
	if utf8.ValidString(e.Key) {
		dst = append(dst, `","key":`...)
		dst = appendString(dst, e.Key)
	} else {
		dst = append(dst, `","key_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, []byte(e.Key))
		dst = append(dst, '"')
	}
	dst = append(dst, `,"family":`...)
	dst = appendString(dst, e.Family)
	dst = append(dst, `,"key_size":`...)
	dst = strconv.AppendInt(dst, int64(e.KeySize), 10)
	dst = append(dst, `,"value_size":`...)
	dst = strconv.AppendInt(dst, int64(e.ValueSize), 10)
	dst = append(dst, `,"result":"`...)
	dst = append(dst, ResultName(e.Op, e.Level)...)
	dst = append(dst, `","promoted":`...)
	dst = strconv.AppendBool(dst, e.Promoted)
	dst = append(dst, `,"cluster":`...)
	dst = appendString(dst, e.Cluster)
	dst = append(dst, `,"region":`...)
	dst = appendString(dst, e.Region)
	dst = append(dst, `,"sample_rate":`...)
	dst = strconv.AppendUint(dst, e.SampleRate, 10)
	return append(dst, "}\n"...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// JSON text must be valid UTF-8.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
