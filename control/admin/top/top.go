package top

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/admin/history"
)

// Config is what Run needs. Base and Out are required.
type Config struct {
	// Base is the admin server's URL, "http://127.0.0.1:11299".
	Base string
	// Token is the bearer token, if the server needs one.
	Token string
	// Out receives the frames.
	Out io.Writer
	// ANSI clears the screen before each frame; set it when Out is a
	// terminal.
	ANSI bool
	// Interval between frames. Default one second.
	Interval time.Duration
	// Count stops after this many frames; 0 runs until ctx ends.
	Count int
	// HTTP is the client. Default one with a 5 s timeout.
	HTTP *http.Client
}

// Frame is what one screen shows.
type Frame struct {
	Addr     string
	Now      time.Time
	Started  time.Time
	N        uint32
	Rules    int
	Points   []history.Point // oldest first; the last ones are the recent window
	Tiers    []admin.TierStatus
	TopKeys  []admin.TopKey
	Problems []string // sections that could not be read
}

// recentPoints is the window of the "last" column: ten seconds.
const recentPoints = 10

// Run draws frames until ctx ends or cfg.Count frames were drawn. A poll
// that fails shows the error in the frame and is retried at the next tick;
// a refused token (401) ends Run with an error.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 5 * time.Second}
	}
	c := &client{base: strings.TrimSuffix(cfg.Base, "/"), token: cfg.Token, http: cfg.HTTP}
	var pts []history.Point
	var lastT int64
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	for drawn := 0; cfg.Count == 0 || drawn < cfg.Count; drawn++ {
		if drawn > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
		f := Frame{Addr: strings.TrimPrefix(c.base, "http://"), Now: time.Now()}
		var h struct {
			Started time.Time       `json:"started"`
			Points  []history.Point `json:"points"`
		}
		path := "history"
		if lastT > 0 {
			path += "?since=" + strconv.FormatInt(lastT, 10)
		}
		if err := c.get(ctx, path, &h); err != nil {
			if isAuth(err) {
				return err
			}
			f.Problems = append(f.Problems, "history: "+err.Error())
		} else {
			pts = append(pts, h.Points...)
			if len(pts) > 0 {
				lastT = pts[len(pts)-1].T
			}
			f.Started = h.Started
		}
		// The terminal shows a minute; the rest is the page's job.
		if len(pts) > 3600 {
			pts = pts[len(pts)-3600:]
		}
		f.Points = pts
		var p admin.Promotion
		if err := c.get(ctx, "promotion", &p); err == nil {
			f.N, f.Rules = p.Threshold, len(p.Rules)
		}
		var ts struct{ Tiers []admin.TierStatus }
		if err := c.get(ctx, "tiers", &ts); err == nil {
			f.Tiers = ts.Tiers
		}
		var tk struct{ Keys []admin.TopKey }
		if err := c.get(ctx, "topkeys?n=5", &tk); err == nil {
			f.TopKeys = tk.Keys
		}
		var b strings.Builder
		if cfg.ANSI {
			b.WriteString("\x1b[H\x1b[2J")
		}
		b.WriteString(Render(f))
		if !cfg.ANSI {
			b.WriteString("\n")
		}
		if _, err := io.WriteString(cfg.Out, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// client reads the admin API.
type client struct {
	base, token string
	http        *http.Client
}

type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return fmt.Sprintf("%d: %s", e.code, e.msg) }

func isAuth(err error) bool {
	se, ok := err.(*statusError)
	return ok && se.code == http.StatusUnauthorized
}

func (c *client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/admin/v1/"+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if e.Error == "" {
			e.Error = resp.Status
		}
		return &statusError{code: resp.StatusCode, msg: e.Error}
	}
	return json.Unmarshal(body, v)
}

// IsTerminal reports whether w is a character device (a terminal or a
// pseudo-terminal), where frames should redraw in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
