package admin

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client is a typed client of the admin API, the one `strata ctl` uses.
// It is safe for concurrent use.
type Client struct {
	base  string // scheme://host:port, without a trailing slash
	token string
	http  *http.Client
}

// maxReply bounds the body of one reply the client reads.
const maxReply = 64 << 20

// NewClient returns a client of the admin server at addr (host:port, or a
// URL starting with http:// or https://). token, when not empty, is sent
// as a bearer token; timeout bounds each call (0: no bound but the
// context's).
func NewClient(addr, token string, timeout time.Duration) *Client {
	return NewTLSClient(addr, token, timeout, nil)
}

// NewTLSClient is NewClient for an https:// address whose server's
// certificate chains to cfg.RootCAs, or that asks for cfg.Certificates;
// nil: the system's roots and no client certificate.
func NewTLSClient(addr, token string, timeout time.Duration, cfg *tls.Config) *Client {
	return &Client{base: BaseURL(addr), token: token, http: HTTPClient(timeout, cfg)}
}

// HTTPClient is the http.Client of NewTLSClient.
func HTTPClient(timeout time.Duration, cfg *tls.Config) *http.Client {
	hc := &http.Client{Timeout: timeout}
	if cfg != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cfg
		hc.Transport = tr
	}
	return hc
}

// BaseURL turns an admin address (host:port, or a URL) into the base URL
// the API's paths are appended to, without a trailing slash.
func BaseURL(addr string) string {
	base := addr
	if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
		base = "http://" + addr
	}
	return strings.TrimSuffix(base, "/")
}

// APIError is an error reply of the admin server.
type APIError struct {
	Status string // the HTTP status line, e.g. "400 Bad Request"
	Code   int    // the HTTP status code
	// Field is the request field the server refused, when it named one.
	Field string
	// Message is the server's explanation (or the raw body when it sent
	// no JSON error).
	Message string
}

func (e *APIError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("admin API: %s: %s: %s", e.Status, e.Field, e.Message)
	}
	return fmt.Sprintf("admin API: %s: %s", e.Status, e.Message)
}

// PromotionPatch is the body of PUT /admin/v1/promotion: a field that is
// set replaces the current value, a nil one keeps it; a non-nil pointer to
// an empty Rules removes every rule. Threshold is an int64 and L1MaxTTL a
// string so that a value out of range reaches the server, whose refusal
// names the field.
type PromotionPatch struct {
	Threshold *int64  `json:"threshold,omitempty"`
	Rules     *[]Rule `json:"rules,omitempty"`
	L1MaxTTL  *string `json:"l1_max_ttl,omitempty"`
}

// Promotion reads the promotion settings.
func (c *Client) Promotion(ctx context.Context) (Promotion, error) {
	var p Promotion
	return p, c.decode(ctx, http.MethodGet, "promotion", nil, &p)
}

// PatchPromotion changes the settings p sets and returns those in force
// after the change.
func (c *Client) PatchPromotion(ctx context.Context, p PromotionPatch) (Promotion, error) {
	var out Promotion
	return out, c.decode(ctx, http.MethodPut, "promotion", p, &out)
}

// Sampler reads the sampler's rate and counters.
func (c *Client) Sampler(ctx context.Context) (SamplerStatus, error) {
	var s SamplerStatus
	return s, c.decode(ctx, http.MethodGet, "sampler", nil, &s)
}

// SetSampleRate changes the sample rate (0 turns sampling off) and
// returns the sampler's state after the change. A negative rate is sent
// as it is, for the server to refuse.
func (c *Client) SetSampleRate(ctx context.Context, rate int64) (SamplerStatus, error) {
	var s SamplerStatus
	return s, c.decode(ctx, http.MethodPut, "sampler", map[string]int64{"rate": rate}, &s)
}

// Tiers lists the cache tiers with their servers and counters.
func (c *Client) Tiers(ctx context.Context) ([]TierStatus, error) {
	var out struct {
		Tiers []TierStatus `json:"tiers"`
	}
	return out.Tiers, c.decode(ctx, http.MethodGet, "tiers", nil, &out)
}

// Raw sends one request to /admin/v1/<path> with body (nil for none)
// marshalled as JSON, and returns the reply's JSON as the server wrote it.
// An error reply is an *APIError.
func (c *Client) Raw(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/admin/v1/"+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return nil, fmt.Errorf("admin API: reading the reply: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.Status, Code: resp.StatusCode}
		var body apiError
		if json.Unmarshal(raw, &body) == nil && body.Error != "" {
			e.Field, e.Message = body.Field, body.Error
		} else {
			e.Message = strings.TrimSpace(string(raw))
		}
		return nil, e
	}
	return raw, nil
}

func (c *Client) decode(ctx context.Context, method, path string, body, out any) error {
	raw, err := c.Raw(ctx, method, path, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("admin API: %s %s: decoding the reply: %w", method, path, err)
	}
	return nil
}
