package admin

import (
	"fmt"
	"os"
	"strings"
)

// ReadToken reads a bearer token file: its content without surrounding
// white space, which must not be empty and must be one word.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s: the token must be one word", path)
	}
	return tok, nil
}
