package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/strata-cache/strata/tiers/promote"
)

// maxBody bounds a PUT body; settings are a few hundred bytes.
const maxBody = 1 << 20

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if s.deps.Endpoint != nil {
		if err := s.deps.Endpoint.Ready(); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
			return
		}
	}
	if s.deps.Tiers != nil {
		if err := ready(s.deps.Tiers.Tiers()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) getConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Config.EffectiveConfig())
}

func (s *Server) getTiers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"tiers": s.deps.Tiers.Tiers()})
}

func (s *Server) getPromotion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, normalized(s.deps.Promotion.Promotion()))
}

// promotionPatch is the body of PUT /admin/v1/promotion: each field that is
// present replaces the current value, an absent one keeps it ("rules": []
// removes every rule).
type promotionPatch struct {
	Threshold *int64  `json:"threshold"`
	Rules     *[]Rule `json:"rules"`
	L1MaxTTL  *string `json:"l1_max_ttl"`
}

func (s *Server) putPromotion(w http.ResponseWriter, r *http.Request) {
	var patch promotionPatch
	if !decodeBody(w, r, &patch) {
		return
	}
	old := normalized(s.deps.Promotion.Promotion())
	next := old
	next.Rules = append([]Rule(nil), old.Rules...)
	if patch.Threshold != nil {
		n := *patch.Threshold
		// Checked before narrowing to the field's uint32.
		if err := promote.CheckThreshold(n); err != nil {
			writeError(w, http.StatusBadRequest, "threshold", err.Error())
			return
		}
		next.Threshold = uint32(n)
	}
	if patch.Rules != nil {
		next.Rules = *patch.Rules
	}
	if patch.L1MaxTTL != nil {
		d, err := time.ParseDuration(strings.TrimSpace(*patch.L1MaxTTL))
		if err != nil {
			writeError(w, http.StatusBadRequest, "l1_max_ttl", fmt.Sprintf("%q is not a duration such as \"60s\"", *patch.L1MaxTTL))
			return
		}
		next.L1MaxTTL = Duration(d)
	}
	if err := checkPromotion(&next); err != nil {
		writeErr(w, err)
		return
	}
	if err := s.deps.Promotion.SetPromotion(next); err != nil {
		writeErr(w, err)
		return
	}
	now := normalized(s.deps.Promotion.Promotion())
	s.log.Info("promotion changed through the admin API",
		"from", promotionString(old), "to", promotionString(now), "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, now)
}

func (s *Server) getSampler(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Sampler.Sampler())
}

type samplerPatch struct {
	Rate *json.Number `json:"rate"`
}

func (s *Server) putSampler(w http.ResponseWriter, r *http.Request) {
	var patch samplerPatch
	if !decodeBody(w, r, &patch) {
		return
	}
	if patch.Rate == nil {
		writeError(w, http.StatusBadRequest, "rate", "missing")
		return
	}
	rate, err := parseRate(*patch.Rate)
	if err != nil {
		writeError(w, http.StatusBadRequest, "rate", err.Error())
		return
	}
	old := s.deps.Sampler.Sampler().Rate
	if err := s.deps.Sampler.SetSampleRate(rate); err != nil {
		writeErr(w, &FieldError{Field: "rate", Err: err})
		return
	}
	s.log.Info("sample rate changed through the admin API", "from", old, "to", rate, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, s.deps.Sampler.Sampler())
}

// parseRate accepts a non-negative integer; 0 turns sampling off.
func parseRate(n json.Number) (uint64, error) {
	s := n.String()
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%s is out of range: must not be negative", s)
	}
	var v uint64
	if _, err := fmt.Sscan(s, &v); err != nil || strings.ContainsAny(s, ".eE") {
		return 0, fmt.Errorf("%s is not a whole number", s)
	}
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%s is out of range: must be below 2^63", s)
	}
	return v, nil
}

func (s *Server) getSamplerReport(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Sampler.Report())
}

// decodeBody reads one JSON object into v, refusing unknown fields,
// trailing data and strings that are not UTF-8. On failure it has written
// the reply: 413 for a body over maxBody, 400 otherwise.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is over %d bytes", maxBody))
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "reading the body: "+err.Error())
		return false
	}
	if field, ok := invalidUTF8Field(body); !ok {
		writeError(w, http.StatusBadRequest, field, "not valid UTF-8")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		writeDecodeError(w, err)
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "", "unexpected data after the JSON object")
		return false
	}
	return true
}

// writeDecodeError names the field a JSON error is about when there is one.
func writeDecodeError(w http.ResponseWriter, err error) {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		writeError(w, http.StatusBadRequest, typeErr.Field, fmt.Sprintf("a JSON %s cannot be a %s", typeErr.Value, typeErr.Type))
	case errors.As(err, &syntaxErr):
		writeError(w, http.StatusBadRequest, "", fmt.Sprintf("bad JSON at byte %d: %v", syntaxErr.Offset, err))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "", "empty body: want a JSON object")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		writeError(w, http.StatusBadRequest, field, "unknown field")
	default:
		writeError(w, http.StatusBadRequest, "", "bad JSON: "+err.Error())
	}
}

func writeErr(w http.ResponseWriter, err error) {
	var fe *FieldError
	if errors.As(err, &fe) {
		writeError(w, http.StatusBadRequest, fe.Field, fe.Err.Error())
		return
	}
	writeError(w, http.StatusBadRequest, "", err.Error())
}

// apiError is the body of every error reply.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeError(w http.ResponseWriter, code int, field, msg string) {
	writeJSON(w, code, apiError{Error: msg, Field: field})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(apiError{Error: "encoding the reply: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// normalized gives Rules a non-nil value so that JSON shows [] rather than
// null.
func normalized(p Promotion) Promotion {
	if p.Rules == nil {
		p.Rules = []Rule{}
	}
	return p
}

func promotionString(p Promotion) string {
	var b strings.Builder
	fmt.Fprintf(&b, "N=%d", p.Threshold)
	for _, r := range p.Rules {
		fmt.Fprintf(&b, " %s=%d", r.Prefix, r.Threshold)
	}
	fmt.Fprintf(&b, " l1_max_ttl=%s", p.L1MaxTTL)
	return b.String()
}
