package locality

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The strata metrics the bench reads (the contract of issue 10).
const (
	metricRequests   = "strata_locality_requests_total"       // {result}
	metricCache      = "strata_locality_location_cache_total" // {result="hit"|"miss"}
	metricMigrations = "strata_locality_migrations_total"
	metricCounter    = "strata_locality_counter_bytes_total"
	metricForwarded  = "strata_locality_forwarded_bytes_total"
)

// sample is the locality counters of one strata at one moment.
type sample struct {
	local, forwarded, wrongOwner, unreachable float64
	cacheHit, cacheMiss                       float64
	migrations, counterBytes, forwardedBytes  float64
}

func (s sample) sub(o sample) sample {
	return sample{
		local: s.local - o.local, forwarded: s.forwarded - o.forwarded,
		wrongOwner: s.wrongOwner - o.wrongOwner, unreachable: s.unreachable - o.unreachable,
		cacheHit: s.cacheHit - o.cacheHit, cacheMiss: s.cacheMiss - o.cacheMiss,
		migrations: s.migrations - o.migrations, counterBytes: s.counterBytes - o.counterBytes,
		forwardedBytes: s.forwardedBytes - o.forwardedBytes,
	}
}

func (s sample) add(o sample) sample {
	var z sample
	return s.sub(z.sub(o))
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// scrape reads one strata's /metrics.
func scrape(ctx context.Context, admin string) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/metrics", nil)
	if err != nil {
		return sample{}, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("%s/metrics: %s", admin, resp.Status)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics picks the locality counters out of Prometheus text. A
// metric that is absent reads as zero.
func parseMetrics(r io.Reader) (sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return sample{}, fmt.Errorf("parse metrics: %w", err)
	}
	var s sample
	sum := func(name, label, value string) float64 {
		f, ok := fams[name]
		if !ok {
			return 0
		}
		var n float64
		for _, m := range f.GetMetric() {
			if label != "" && labelValue(m, label) != value {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				n += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				n += m.GetGauge().GetValue()
			case m.GetUntyped() != nil:
				n += m.GetUntyped().GetValue()
			}
		}
		return n
	}
	s.local = sum(metricRequests, "result", "local")
	s.forwarded = sum(metricRequests, "result", "forwarded")
	s.wrongOwner = sum(metricRequests, "result", "wrong_owner")
	s.unreachable = sum(metricRequests, "result", "owner_unreachable")
	s.cacheHit = sum(metricCache, "result", "hit")
	s.cacheMiss = sum(metricCache, "result", "miss")
	s.migrations = sum(metricMigrations, "", "")
	s.counterBytes = sum(metricCounter, "", "")
	s.forwardedBytes = sum(metricForwarded, "", "")
	return s, nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// scrapeAll reads every region's counters and sums them.
func scrapeAll(ctx context.Context, t *topology) (sample, error) {
	var total sample
	for _, r := range t.regions {
		s, err := scrape(ctx, r.admin)
		if err != nil {
			return sample{}, err
		}
		total = total.add(s)
	}
	return total, nil
}

// l2Bytes reads memcached's "bytes" statistic: what its items take.
func l2Bytes(addr string) (int64, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		return 0, err
	}
	return statsBytes(bufio.NewReader(c))
}

// statsBytes reads a stats reply up to END and returns its "bytes".
func statsBytes(br *bufio.Reader) (int64, error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return 0, err
		}
		line = strings.TrimSpace(line)
		if line == "END" {
			return 0, errors.New("no bytes statistic")
		}
		if v, ok := strings.CutPrefix(line, "STAT bytes "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("bytes statistic %q", v)
			}
			return n, nil
		}
	}
}

// pin asks a strata's admin API to pin μ-shard name to region.
func pin(ctx context.Context, admin, name, region string) error {
	body, _ := json.Marshal(map[string]string{"region": region})
	u := "http://" + admin + "/admin/v1/locality/mushards/" + url.PathEscape(name) + "/pin"
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("pin %s to %s: %s %s", name, region, resp.Status, bytes.TrimSpace(b))
	}
	return nil
}

// owner reads μ-shard name's owner from a strata's admin API.
func owner(ctx context.Context, admin, name string) (string, error) {
	u := "http://" + admin + "/admin/v1/locality/mushards/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get μ-shard %s: %s", name, resp.Status)
	}
	var row struct {
		Owner string `json:"owner"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&row); err != nil {
		return "", fmt.Errorf("get μ-shard %s: %w", name, err)
	}
	return row.Owner, nil
}
