package samplelog

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func sample(i int) Entry {
	return Entry{
		Time: t0.Add(time.Duration(i) * time.Millisecond).UnixNano(), Op: OpGet,
		Key: "photos:foobar:12345:c1", Family: "photos:foobar:{N}:c{N}",
		KeySize: 22, ValueSize: 100 + i, Level: 2, Promoted: i%2 == 0,
		Cluster: "c1", Region: "r1", SampleRate: 1000000,
	}
}

func TestRoundTrip(t *testing.T) {
	cases := []Entry{
		sample(1),
		{Time: t0.UnixNano(), Op: OpSet, Key: "k\"\\\n\t\x01é", Family: "f", KeySize: 9, ValueSize: 3, Cluster: "c", Region: "", SampleRate: 1},
		{Time: t0.UnixNano() + 5000, Op: OpDelete, Key: "bin\xff\xfekey", Family: "bin\xff", KeySize: 8, Cluster: "c2", SampleRate: 7},
		{Time: t0.UnixNano(), Op: OpTouch, Key: "t", KeySize: 1, Level: 1, Cluster: "c", SampleRate: 3},
		{Time: t0.UnixNano(), Op: OpArith, Key: "n", KeySize: 1, ValueSize: 2, Cluster: "c", SampleRate: 3},
	}
	for _, in := range cases {
		line := AppendJSON(nil, &in)
		if !json.Valid(line) || line[len(line)-1] != '\n' {
			t.Fatalf("invalid JSON line %q", line)
		}
		var out Entry
		if err := ParseLine(line[:len(line)-1], &out); err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		want := in
		if want.Family == "bin\xff" {
			want.Family = "bin\ufffd" // JSON text is UTF-8
		}
		if out != want {
			t.Errorf("round trip\n in %+v\nout %+v\nline %s", want, out, line)
		}
	}
	line := string(AppendJSON(nil, &cases[2]))
	if !strings.Contains(line, `"key_b64":"Ymlu//5rZXk="`) || strings.Contains(line, `"key":`) {
		t.Errorf("binary key not in key_b64: %s", line)
	}
	line = string(AppendJSON(nil, &cases[0]))
	want := `{"time":"2026-05-01T12:00:00.001000Z","op":"get","key":"photos:foobar:12345:c1","family":"photos:foobar:{N}:c{N}","key_size":22,"value_size":101,"result":"l2_hit","promoted":false,"cluster":"c1","region":"r1","sample_rate":1000000}` + "\n"
	if line != want {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
}

func TestParseLineErrors(t *testing.T) {
	good := strings.TrimSuffix(string(AppendJSON(nil, &Entry{Time: t0.UnixNano(), Key: "k", Cluster: "c", SampleRate: 1})), "\n")
	for _, c := range []struct{ line, reason string }{
		{`not json`, "invalid JSON"},
		{`{"op":"get"}`, `missing field "time"`},
		{strings.Replace(good, `"op":"get"`, `"op":"frob"`, 1), `unknown op "frob"`},
		{strings.Replace(good, `"result":"miss"`, `"result":"maybe"`, 1), `unknown result`},
		{strings.Replace(good, `"sample_rate":1`, `"sample_rate":0`, 1), `sample_rate is 0`},
		{strings.Replace(good, `"cluster":"c",`, ``, 1), `missing field "cluster"`},
		{strings.Replace(good, `2026-05-01T`, `2026-13-01T`, 1), `bad time`},
		{good[:len(good)-10], "invalid JSON"},
	} {
		var e Entry
		err := ParseLine([]byte(c.line), &e)
		if err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("ParseLine(%q) = %v, want %q", c.line, err, c.reason)
		}
	}
}

func scanAll(t *testing.T, path string) ([]Entry, []string) {
	t.Helper()
	var got []Entry
	var bad []string
	if err := ScanFile(path, func(e *Entry) { got = append(got, *e) }, func(le *LineError) { bad = append(bad, le.Error()) }); err != nil {
		t.Fatal(err)
	}
	return got, bad
}

func TestScanSkipsBadLines(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	buf.Write(AppendJSON(nil, ptr(sample(1))))
	buf.WriteString("garbage\n")
	buf.WriteString("\n") // blank: ignored, but counted as a line
	buf.Write(AppendJSON(nil, ptr(sample(2))))
	buf.WriteString(strings.Repeat("x", MaxLineBytes+10) + "\n")
	buf.Write(AppendJSON(nil, ptr(sample(3))))
	last := AppendJSON(nil, ptr(sample(4)))
	buf.Write(last[:len(last)/2]) // the writer died mid-line
	path := filepath.Join(dir, "a.jsonl")
	os.WriteFile(path, buf.Bytes(), 0o644)
	got, bad := scanAll(t, path)
	if len(got) != 3 || got[0].ValueSize != 101 || got[1].ValueSize != 102 || got[2].ValueSize != 103 {
		t.Fatalf("got %+v", got)
	}
	if len(bad) != 3 ||
		!strings.HasPrefix(bad[0], path+":2: malformed record: invalid JSON") ||
		!strings.HasPrefix(bad[1], path+":5: malformed record: line longer") ||
		!strings.HasPrefix(bad[2], path+":7: truncated: no newline at end of file") {
		t.Fatalf("bad lines: %q", bad)
	}
}

func TestScanTruncatedGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := 0; i < 2000; i++ {
		zw.Write(AppendJSON(nil, ptr(sample(i))))
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "a.jsonl.gz")
	os.WriteFile(path, buf.Bytes()[:buf.Len()/2], 0o644)
	got, bad := scanAll(t, path)
	if len(got) == 0 || len(got) >= 2000 {
		t.Fatalf("read %d records from half a gzip file", len(got))
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "truncated") || !strings.HasPrefix(bad[0], path+":") {
		t.Fatalf("bad: %q", bad)
	}
	for i, e := range got {
		if e.ValueSize != 100+i {
			t.Fatalf("record %d: %+v", i, e)
		}
	}
}

func ptr(e Entry) *Entry { return &e }

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func TestWriterRotatesBySize(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{now: t0}
	fixed := func(i int) *Entry { e := sample(i); e.Promoted = false; return &e } // equal line lengths
	lineLen := int64(len(AppendJSON(nil, fixed(100))))
	w, err := NewWriter(WriterConfig{Dir: dir, Prefix: "strata-c1-r1", MaxBytes: 3 * lineLen, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for i := 100; i < 110; i++ {
		if err := w.Write(fixed(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The open file is not visible under a final name yet.
	if m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(m) != 3 {
		t.Fatalf("published before close: %v", m)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 4 {
		t.Fatalf("files %v", files)
	}
	n := 200
	for i, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "strata-c1-r1-20260501T120000.000000Z-") || !strings.HasSuffix(f, ".jsonl") {
			t.Errorf("name %s", f)
		}
		st, _ := os.Stat(f)
		want := 3 * lineLen
		if i == 3 {
			want = lineLen
		}
		if st.Size() != want {
			t.Errorf("%s: %d bytes, want %d", f, st.Size(), want)
		}
		got, bad := scanAll(t, f)
		if len(bad) != 0 {
			t.Fatal(bad)
		}
		for _, e := range got {
			if e.ValueSize != n {
				t.Fatalf("%s: value_size %d want %d", f, e.ValueSize, n)
			}
			n++
		}
	}
	if n != 210 {
		t.Fatalf("read back %d records", n-200)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+PartSuffix)); len(m) != 0 {
		t.Fatalf("part files left: %v", m)
	}
}

func TestWriterRotatesByAgeWithGzip(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{now: t0}
	w, err := NewWriter(WriterConfig{Dir: dir, Prefix: "p", MaxAge: time.Minute, Gzip: true, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	write := func(i int) {
		if err := w.Write(ptr(sample(i))); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	write(1)
	clk.now = t0.Add(59 * time.Second)
	write(2)
	if err := w.RotateIfOld(); err != nil || len(w.Files()) != 0 {
		t.Fatalf("rotated early: %v %v", err, w.Files())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// A flushed part file is readable up to the flush.
	parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if got, _ := scanAll(t, parts[0]); len(got) != 3 {
		t.Fatalf("part file has %d records after flush", len(got))
	}
	clk.now = t0.Add(time.Minute)
	write(3) // first record past the age: goes to a new file
	clk.now = t0.Add(2*time.Minute + time.Second)
	if err := w.RotateIfOld(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 2 || !strings.HasSuffix(files[0], ".jsonl.gz") || !strings.Contains(files[1], "T120100.000000Z") {
		t.Fatalf("files %v", files)
	}
	var counts []int
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
			t.Fatalf("%s is not gzip", f)
		}
		got, bad := scanAll(t, f)
		if len(bad) != 0 {
			t.Fatal(bad)
		}
		counts = append(counts, len(got))
	}
	if counts[0] != 3 || counts[1] != 1 {
		t.Fatalf("records per file %v", counts)
	}
	// Nothing to close: no empty file is created.
	if err := w.Close(); err != nil || len(w.Files()) != 2 {
		t.Fatalf("close: %v %v", err, w.Files())
	}
}
