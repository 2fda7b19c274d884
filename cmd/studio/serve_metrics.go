package main

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveMetrics are what GET /metrics serves, in Prometheus's text format, from a registry of the
// server's own (so two servers in one test process never share a counter).
type serveMetrics struct {
	reg        *prometheus.Registry
	deliveries *prometheus.CounterVec
	ack        prometheus.Histogram
	inFlight   prometheus.Gauge
	requests   *prometheus.CounterVec
	rateLeft   prometheus.Gauge
	dispatches *prometheus.CounterVec
}

func newServeMetrics() *serveMetrics {
	m := &serveMetrics{
		reg: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "studio_deliveries_total", Help: "Webhook deliveries by event and outcome.",
		}, []string{"event", "outcome"}),
		ack: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "studio_ack_seconds", Help: "From a delivery's arrival to its command's reaction accepted by GitHub.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 5, 10},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "studio_deliveries_in_flight", Help: "Deliveries being handled now.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "studio_github_requests_total", Help: "GitHub API requests (each attempt) by method and status code.",
		}, []string{"method", "code"}),
		rateLeft: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "studio_github_rate_limit_remaining", Help: "X-RateLimit-Remaining of the latest GitHub answer that had one.",
		}),
		dispatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "studio_dispatches_total", Help: "workflow_dispatch requests by status code.",
		}, []string{"code"}),
	}
	m.reg.MustRegister(m.deliveries, m.ack, m.inFlight, m.requests, m.rateLeft, m.dispatches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *serveMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// metricsTransport counts every GitHub request below the retries (each attempt is one), keeps the
// rate limit's remaining count, and times a delivery's reaction from the delivery's arrival.
type metricsTransport struct {
	base  http.RoundTripper
	m     *serveMetrics
	acked func(delivery string, d time.Duration)
}

func (t *metricsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
		if v := resp.Header.Get("X-RateLimit-Remaining"); v != "" {
			if n, perr := strconv.Atoi(v); perr == nil {
				t.m.rateLeft.Set(float64(n))
			}
		}
	}
	t.m.requests.WithLabelValues(req.Method, code).Inc()
	if req.Method != http.MethodPost {
		return resp, err
	}
	switch path := req.URL.Path; {
	case strings.HasSuffix(path, "/dispatches"):
		t.m.dispatches.WithLabelValues(code).Inc()
	case strings.HasSuffix(path, "/reactions") && strings.Contains(path, "/issues/comments/") && err == nil && resp.StatusCode < 300:
		if a := arrivalOf(req.Context()); a != nil {
			a.once.Do(func() {
				d := time.Since(a.at)
				a.ack.Store(int64(d))
				t.m.ack.Observe(d.Seconds())
				if t.acked != nil {
					t.acked(a.delivery, d)
				}
			})
		}
	}
	return resp, err
}
