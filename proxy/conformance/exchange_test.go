package conformance

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// testCase is one case of testdata/exchanges.txt. Its steps are kept as
// unexpanded templates because ${cas} refers to values the server under test
// returned in earlier steps.
type testCase struct {
	name   string
	line   int  // line of the "case" directive
	closes bool // the last step ends with the server closing the connection
	chunk  int  // > 0: each step is written in pieces of this many bytes
	steps  []step
}

type step struct {
	line int    // line of the "send" directive
	src  string // template: escapes and ${...} expansions not yet applied
}

// parseCases reads the case file format documented at the top of
// testdata/exchanges.txt.
func parseCases(path string) ([]*testCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var (
		cases []*testCase
		cur   *testCase
		seen  = map[string]int{}
		sc    = bufio.NewScanner(f)
		n     int
	)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), " \t")
		text := strings.TrimLeft(raw, " \t")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		word, rest, _ := strings.Cut(text, " ")
		if word != "case" && cur == nil {
			return nil, fail("%q before the first case", word)
		}
		switch word {
		case "case":
			if rest == "" || strings.ContainsAny(rest, " \t") {
				return nil, fail("case needs one name without spaces")
			}
			if prev, dup := seen[rest]; dup {
				return nil, fail("case %q already defined at line %d", rest, prev)
			}
			seen[rest] = n
			cur = &testCase{name: rest, line: n}
			cases = append(cases, cur)
		case "close":
			if rest != "" {
				return nil, fail("close takes no argument")
			}
			cur.closes = true
		case "chunk":
			size, err := strconv.Atoi(rest)
			if err != nil || size <= 0 {
				return nil, fail("chunk needs a positive byte count")
			}
			cur.chunk = size
		case "send":
			cur.steps = append(cur.steps, step{line: n, src: rest})
		case "more":
			if len(cur.steps) == 0 {
				return nil, fail("more without a preceding send")
			}
			cur.steps[len(cur.steps)-1].src += rest
		default:
			return nil, fail("unknown directive %q", word)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, c := range cases {
		if len(c.steps) == 0 {
			return nil, fmt.Errorf("%s:%d: case %s has no send", path, c.line, c.name)
		}
		// Expand once with a stand-in environment so that template errors
		// surface at load time, not halfway through a run.
		env := &expandEnv{prefix: "p:", cas: []uint64{1, 2, 3, 4, 5, 6, 7, 8}}
		for _, s := range c.steps {
			if _, err := env.expand(s.src); err != nil {
				return nil, fmt.Errorf("%s:%d: case %s: %w", path, s.line, c.name, err)
			}
		}
	}
	return cases, nil
}

// expandEnv is what templates may refer to. One exists per case and server.
type expandEnv struct {
	prefix string   // $k: the case's key namespace
	cas    []uint64 // non-zero CAS values this server returned so far, in order
	now    int64    // Unix time taken once per run, for ${now N}
}

// expand turns a template into the bytes to send.
func (e *expandEnv) expand(src string) ([]byte, error) {
	var out []byte
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch ch {
		case '\\':
			if i+1 >= len(src) {
				return nil, errors.New("dangling backslash")
			}
			i++
			switch src[i] {
			case 'r':
				out = append(out, '\r')
			case 'n':
				out = append(out, '\n')
			case 't':
				out = append(out, '\t')
			case 's':
				out = append(out, ' ')
			case '0':
				out = append(out, 0)
			case '\\', '$':
				out = append(out, src[i])
			case 'x':
				if i+2 >= len(src) {
					return nil, errors.New("short \\x escape")
				}
				b, err := strconv.ParseUint(src[i+1:i+3], 16, 8)
				if err != nil {
					return nil, fmt.Errorf("bad \\x escape %q", src[i+1:i+3])
				}
				out = append(out, byte(b))
				i += 2
			default:
				return nil, fmt.Errorf("unknown escape \\%c", src[i])
			}
		case '$':
			if i+1 < len(src) && src[i+1] == 'k' {
				out = append(out, e.prefix...)
				i++
				continue
			}
			if i+1 >= len(src) || src[i+1] != '{' {
				return nil, errors.New("lone $ (write \\$ for a literal one)")
			}
			end := matchBrace(src, i+1)
			if end < 0 {
				return nil, errors.New("unclosed ${")
			}
			v, err := e.call(src[i+2 : end])
			if err != nil {
				return nil, err
			}
			out = append(out, v...)
			i = end
		default:
			out = append(out, ch)
		}
	}
	return out, nil
}

// matchBrace returns the index of the '}' closing the '{' at open, allowing
// nested ${...}.
func matchBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// call evaluates the inside of ${...}.
func (e *expandEnv) call(body string) ([]byte, error) {
	v, err := e.eval(body)
	if err != nil {
		return nil, fmt.Errorf("${%s}: %w", body, err)
	}
	return v, nil
}

func (e *expandEnv) eval(body string) ([]byte, error) {
	name, arg, _ := strings.Cut(body, " ")
	switch name {
	case "key": // ${key N}: a key of exactly N bytes in the case's namespace
		n, err := strconv.Atoi(arg)
		if err != nil || n < len(e.prefix) {
			return nil, fmt.Errorf("need a length of at least %d", len(e.prefix))
		}
		return append([]byte(e.prefix), bytes.Repeat([]byte("x"), n-len(e.prefix))...), nil
	case "rep": // ${rep N TEXT}: TEXT (expanded) N times
		count, text, _ := strings.Cut(arg, " ")
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return nil, errors.New("bad count")
		}
		unit, err := e.expand(text)
		if err != nil {
			return nil, err
		}
		return bytes.Repeat(unit, n), nil
	case "b64": // ${b64 TEXT}: standard base64 of TEXT (expanded)
		raw, err := e.expand(arg)
		if err != nil {
			return nil, err
		}
		return []byte(base64.StdEncoding.EncodeToString(raw)), nil
	case "cas": // ${cas}: the last CAS; ${cas N}: the Nth (1-based, negative from the end)
		idx := len(e.cas) - 1
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n == 0 {
				return nil, errors.New("bad index")
			}
			if n > 0 {
				idx = n - 1
			} else {
				idx = len(e.cas) + n
			}
		}
		if idx < 0 || idx >= len(e.cas) {
			return nil, fmt.Errorf("only %d CAS values captured so far", len(e.cas))
		}
		return strconv.AppendUint(nil, e.cas[idx], 10), nil
	case "cas+1": // ${cas+1}: one more than the last CAS, a value that cannot match it
		if len(e.cas) == 0 {
			return nil, errors.New("no CAS captured so far")
		}
		return strconv.AppendUint(nil, e.cas[len(e.cas)-1]+1, 10), nil
	case "now": // ${now N}: the run's Unix time plus N seconds
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return nil, errors.New("bad offset")
		}
		return strconv.AppendInt(nil, e.now+n, 10), nil
	}
	return nil, errors.New("unknown expansion")
}

// countNoops counts the mn commands among the lines of req. Each one earns
// an MN reply line, which the reader must not mistake for the sentinel's.
func countNoops(req []byte) int {
	n := 0
	for _, line := range bytes.Split(req, []byte("\n")) {
		line = bytes.TrimLeft(bytes.TrimSuffix(line, []byte("\r")), " ")
		word, _, _ := bytes.Cut(line, []byte(" "))
		if string(word) == "mn" {
			n++
		}
	}
	return n
}
