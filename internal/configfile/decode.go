package configfile

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/strata-cache/strata/internal/tomlpos"
)

// File is a decoded configuration file with what is needed to place an
// error on the line of its key.
type File struct {
	Name  string
	Meta  toml.MetaData
	Lines *tomlpos.Lines
}

// ErrAt builds an error for the key at its indexed path
// ("promotion.rule[1].threshold"), placed on that key's line (none when
// the file does not write the key).
func (f *File) ErrAt(key, format string, args ...any) *Error {
	return Errorf(f.Name, f.Lines.LineOf(key), key, format, args...)
}

// tomlErrorRE reads the decoder's errors that are not ParseErrors (type
// mismatches): "toml: line 3 (last key "l1.memory"): message".
var tomlErrorRE = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

// Decode decodes data, the file called name, into v, a pointer to a
// struct of schema s. A syntax or type error stops it at the first, which
// is returned alone as fatal. Otherwise it returns the
// file and the problems of the keys no field takes: each unknown key or
// section once (not the keys inside an unknown table), with its line and
// a suggestion, and each key that differs from a known one only by case,
// which the decoder accepts but the format does not.
func (s *Schema) Decode(name string, data []byte, v any) (f *File, errs Errors, fatal *Error) {
	f = &File{Name: name, Lines: tomlpos.Scan(data)}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(v)
	if err != nil {
		return nil, nil, f.decodeError(err)
	}
	f.Meta = md
	var reported []string
	for _, k := range md.Undecoded() {
		key := k.String()
		if coveredBy(key, reported) {
			continue // a key inside an unknown table already reported
		}
		reported = append(reported, key)
		line, indexed := f.Lines.Next(key)
		what := "unknown key"
		if typ := md.Type(k...); typ == "Hash" || typ == "ArrayHash" {
			what = "unknown section"
		}
		errs = append(errs, &Error{File: name, Line: line, Key: indexed, Msg: what + s.suggest(key)})
	}
	return f, append(errs, s.caseErrors(f)...), nil
}

func (f *File) decodeError(err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		e := &Error{File: f.Name, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		if e.Line == 0 && e.Key != "" {
			e.Line = f.Lines.LineOf(e.Key)
		}
		return e
	}
	msg := err.Error()
	if m := tomlErrorRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if line == 0 {
			line = f.Lines.LineOf(m[2])
		}
		return &Error{File: f.Name, Line: line, Key: m[2], Msg: m[3]}
	}
	return &Error{File: f.Name, Msg: strings.TrimPrefix(msg, "toml: ")}
}

func coveredBy(key string, parents []string) bool {
	for _, p := range parents {
		if strings.HasPrefix(key, p+".") {
			return true
		}
	}
	return false
}

// caseErrors reports keys the decoder accepted only because it matches
// field names case-insensitively: the file format is case-sensitive.
func (s *Schema) caseErrors(f *File) Errors {
	var errs Errors
	for _, k := range f.Meta.Keys() {
		key := k.String()
		if s.known[key] || s.belowOpaque(key) {
			continue
		}
		for known := range s.known {
			if strings.EqualFold(known, key) {
				line, indexed := f.Lines.Next(key)
				errs = append(errs, &Error{File: f.Name, Line: line, Key: indexed, Msg: fmt.Sprintf("unknown key (keys are lower case: %q)", known)})
				break
			}
		}
	}
	return errs
}
