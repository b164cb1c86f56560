package admin

import "github.com/prometheus/client_golang/prometheus"

// serverCollector exports each configured memcached server's state as
// strata_server_up{tier,server} (1 while it serves) at scrape time, for
// the "L2 server down" alert. Labels come from the configured server
// list, never from keys.
type serverCollector struct {
	src TierView
	up  *prometheus.Desc
}

var _ prometheus.Collector = (*serverCollector)(nil)

func newServerCollector(src TierView) *serverCollector {
	return &serverCollector{src: src, up: prometheus.NewDesc("strata_server_up",
		"1 while a memcached server of a pool tier serves requests, 0 while it is down or returning.", []string{"tier", "server"}, nil)}
}

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.up }

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	// A server listed twice across a reload is one series: up if any entry is.
	seen := map[[2]string]float64{}
	for _, t := range c.src.Tiers() {
		for _, s := range t.Servers {
			k := [2]string{t.Name, s.Addr}
			if s.State == ServerUp {
				seen[k] = 1
			} else if _, ok := seen[k]; !ok {
				seen[k] = 0
			}
		}
	}
	for k, v := range seen {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, v, k[0], k[1])
	}
}
