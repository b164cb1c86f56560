package report

import (
	"encoding/json"
	"io"
)

// WriteJSON renders r as indented JSON (the schema is the Report type's).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
