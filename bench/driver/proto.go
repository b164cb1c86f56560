package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/strata-cache/strata/bench/workload"
)

// filler is the byte pattern values are cut from. Its content is irrelevant
// to a cache; its length bounds the value size.
var filler = bytes.Repeat([]byte("strata-bench-value/"), workload.MaxValueSize/19+1)

// appendRequest encodes r in the memcached text protocol (mg for the meta
// get) onto dst.
func appendRequest(dst []byte, r *workload.Request) []byte {
	switch r.Op {
	case workload.OpGet:
		dst = append(dst, "get "...)
		dst = append(dst, r.Key...)
	case workload.OpGets:
		dst = append(dst, "gets "...)
		dst = append(dst, r.Key...)
	case workload.OpMetaGet:
		dst = append(dst, "mg "...)
		dst = append(dst, r.Key...)
		dst = append(dst, " v"...)
	case workload.OpDelete:
		dst = append(dst, "delete "...)
		dst = append(dst, r.Key...)
	case workload.OpSet:
		dst = append(dst, "set "...)
		dst = append(dst, r.Key...)
		dst = append(dst, " 0 "...)
		dst = strconv.AppendInt(dst, r.TTL, 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(r.ValueSize), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, filler[:r.ValueSize]...)
	}
	return append(dst, "\r\n"...)
}

// outcome is what one reply said.
type outcome uint8

const (
	outHit       outcome = iota // a read found the key
	outMiss                     // a read found nothing
	outStored                   // STORED
	outNotStored                // NOT_STORED / EXISTS / NOT_FOUND on a set
	outDeleted                  // DELETED
	outNotFound                 // NOT_FOUND on a delete
	outError                    // ERROR, CLIENT_ERROR ..., SERVER_ERROR ...
)

// ErrProtocol marks a reply the driver cannot parse or that does not match
// its request; the connection's byte stream can no longer be trusted.
var ErrProtocol = errors.New("protocol error")

// replyInfo carries facts about a reply beyond its outcome.
type replyInfo struct {
	// badSize: a hit whose value length differs from the key's size.
	badSize bool
	// errLine is the text of an error reply (copied), for the report.
	errLine string
}

// readReply parses the reply to r from br. The value bytes are skipped,
// never copied. Errors other than ErrProtocol are I/O errors.
func readReply(br *bufio.Reader, r *workload.Request) (outcome, replyInfo, error) {
	var info replyInfo
	line, err := readLine(br)
	if err != nil {
		return 0, info, err
	}
	if isErrorLine(line) {
		info.errLine = string(line)
		return outError, info, nil
	}
	switch r.Op {
	case workload.OpGet, workload.OpGets:
		hit := false
		for {
			if bytes.Equal(line, []byte("END")) {
				if hit {
					return outHit, info, nil
				}
				return outMiss, info, nil
			}
			rest, ok := bytes.CutPrefix(line, []byte("VALUE "))
			if !ok || hit {
				return 0, info, fmt.Errorf("%w: %q in reply to %s %s", ErrProtocol, line, r.Op, r.Key)
			}
			fields := bytes.Fields(rest)
			if len(fields) < 3 || !bytes.Equal(fields[0], r.Key) || (r.Op == workload.OpGets && len(fields) < 4) {
				return 0, info, fmt.Errorf("%w: %q in reply to %s %s", ErrProtocol, line, r.Op, r.Key)
			}
			n, perr := strconv.Atoi(string(fields[2]))
			if perr != nil || n < 0 {
				return 0, info, fmt.Errorf("%w: bad length in %q", ErrProtocol, line)
			}
			if err := skipData(br, n); err != nil {
				return 0, info, err
			}
			info.badSize = n != r.ValueSize
			hit = true
			if line, err = readLine(br); err != nil {
				return 0, info, err
			}
		}
	case workload.OpMetaGet:
		switch {
		case bytes.Equal(line, []byte("EN")):
			return outMiss, info, nil
		case bytes.HasPrefix(line, []byte("VA ")):
			fields := bytes.Fields(line[3:])
			n, perr := 0, error(nil)
			if len(fields) > 0 {
				n, perr = strconv.Atoi(string(fields[0]))
			}
			if len(fields) == 0 || perr != nil || n < 0 {
				return 0, info, fmt.Errorf("%w: bad length in %q", ErrProtocol, line)
			}
			info.badSize = n != r.ValueSize
			return outHit, info, skipData(br, n)
		case bytes.Equal(line, []byte("HD")) || bytes.HasPrefix(line, []byte("HD ")):
			return outHit, info, nil
		}
	case workload.OpSet:
		switch string(line) {
		case "STORED":
			return outStored, info, nil
		case "NOT_STORED", "EXISTS", "NOT_FOUND":
			return outNotStored, info, nil
		}
	case workload.OpDelete:
		switch string(line) {
		case "DELETED":
			return outDeleted, info, nil
		case "NOT_FOUND":
			return outNotFound, info, nil
		}
	}
	return 0, info, fmt.Errorf("%w: %q in reply to %s %s", ErrProtocol, line, r.Op, r.Key)
}

// readLine returns the next line without its \r\n. The slice is valid until
// the next read from br.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: reply line longer than %d bytes", ErrProtocol, br.Size())
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// skipData discards a data block of n bytes and its \r\n.
func skipData(br *bufio.Reader, n int) error {
	if _, err := br.Discard(n); err != nil {
		return err
	}
	tail, err := br.Peek(2)
	if err != nil {
		return err
	}
	if tail[0] != '\r' || tail[1] != '\n' {
		return fmt.Errorf("%w: data block of %d bytes not followed by \\r\\n", ErrProtocol, n)
	}
	_, err = br.Discard(2)
	return err
}

func isErrorLine(line []byte) bool {
	return bytes.Equal(line, []byte("ERROR")) ||
		bytes.HasPrefix(line, []byte("CLIENT_ERROR")) ||
		bytes.HasPrefix(line, []byte("SERVER_ERROR"))
}
