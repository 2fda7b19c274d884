package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/codex-studio/studio-action/internal/sandbox"
)

// scrape reads GET /metrics as Prometheus would.
func (s *serveWorld) scrape() map[string]*dto.MetricFamily {
	s.t.Helper()
	code, body := s.get("/metrics")
	if code != http.StatusOK {
		s.t.Fatalf("/metrics: %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		s.t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return mfs
}

// byLabels sums a counter (or gauge) family by the values of the named labels, joined by "/".
func byLabels(mf *dto.MetricFamily, names ...string) map[string]float64 {
	out := map[string]float64{}
	if mf == nil {
		return out
	}
	for _, m := range mf.GetMetric() {
		var key []string
		for _, n := range names {
			for _, l := range m.GetLabel() {
				if l.GetName() == n {
					key = append(key, l.GetValue())
				}
			}
		}
		v := m.GetCounter().GetValue()
		if m.Gauge != nil {
			v = m.GetGauge().GetValue()
		}
		out[strings.Join(key, "/")] += v
	}
	return out
}

// /metrics after a few deliveries holds what the issue lists, each counted exactly: deliveries
// by event and outcome, the acknowledgement latency histogram (one observation per reaction),
// every GitHub request by method and status code (as the emulator logged them), the rate limit's
// remaining count GitHub last reported, and the dispatches by status code.
func TestServeMetricsCountDeliveriesRequestsAndDispatches(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	before := s.scrape()
	requestsBefore := len(s.Emu.Requests())
	rateBefore := before["studio_github_rate_limit_remaining"].GetMetric()[0].GetGauge().GetValue()

	n := s.issue("Make the jump snappier", taskBody)
	_, writers := s.comment(n, sandbox.Writer, "/studio run")
	_, readers := s.comment(n, "reader", "/studio run")
	_, help := s.comment(n, "reader", "/studio help")
	for _, d := range []struct {
		payload []byte
		want    string
	}{{writers, "queued"}, {readers, "refused"}, {help, "done"}} {
		if _, code, outcome := s.deliver("issue_comment", d.payload); code != http.StatusAccepted || outcome != d.want {
			t.Fatalf("delivery: %d %q, want %s", code, outcome, d.want)
		}
	}
	body := s.installed(writers)
	if code, _ := s.post("issue_comment", newDeliveryID(), body, sign("wrong", body)); code != http.StatusUnauthorized {
		t.Fatalf("a wrong signature: %d", code)
	}
	ping := []byte(`{"zen":"Keep it logically awesome."}`)
	if code, _ := s.post("ping", newDeliveryID(), ping, sign(serveSecret, ping)); code != http.StatusOK {
		t.Fatalf("ping: %d", code)
	}

	after := s.scrape()
	wantDeliveries := map[string]float64{
		"issue_comment/queued": 1, "issue_comment/refused": 1, "issue_comment/done": 1,
		"issue_comment/bad_signature": 1, "ping/ping": 1,
	}
	if got := byLabels(after["studio_deliveries_total"], "event", "outcome"); fmt.Sprint(got) != fmt.Sprint(wantDeliveries) {
		t.Errorf("studio_deliveries_total = %v, want %v", got, wantDeliveries)
	}

	// One reaction (the writer's command; a refusal and help get none), timed from the arrival.
	h := after["studio_ack_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() <= 0 {
		t.Errorf("studio_ack_seconds: count %d sum %v, want one positive observation", h.GetSampleCount(), h.GetSampleSum())
	}
	if bs := h.GetBucket(); len(bs) == 0 || bs[len(bs)-1].GetCumulativeCount() != 1 {
		t.Errorf("studio_ack_seconds buckets = %v, want the observation counted up to the last", bs)
	}

	// Every request the emulator answered since the first scrape, by method and status code.
	wantRequests := map[string]float64{}
	for _, r := range s.Emu.Requests()[requestsBefore:] {
		if !r.Git {
			wantRequests[r.Method+"/"+strconv.Itoa(r.Status)]++
		}
	}
	got, was := byLabels(after["studio_github_requests_total"], "method", "code"), byLabels(before["studio_github_requests_total"], "method", "code")
	for k, v := range was {
		if got[k] -= v; got[k] == 0 {
			delete(got, k)
		}
	}
	if len(wantRequests) == 0 || fmt.Sprint(got) != fmt.Sprint(wantRequests) {
		t.Errorf("studio_github_requests_total grew by %v, the emulator answered %v", got, wantRequests)
	}

	rate := after["studio_github_rate_limit_remaining"].GetMetric()[0].GetGauge().GetValue()
	if rate <= 0 || rate >= rateBefore {
		t.Errorf("studio_github_rate_limit_remaining = %v (was %v), want it to follow GitHub's count down", rate, rateBefore)
	}
	if got := byLabels(after["studio_dispatches_total"], "code"); len(got) != 1 || got["200"] != float64(len(s.Emu.Dispatches(sandbox.Owner, sandbox.Repo))) || got["200"] != 1 {
		t.Errorf("studio_dispatches_total = %v, want one 200", got)
	}
	if got := after["studio_deliveries_in_flight"].GetMetric()[0].GetGauge().GetValue(); got != 0 {
		t.Errorf("studio_deliveries_in_flight = %v after every delivery ended", got)
	}
}
