package codex

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/policy/spend"
)

func perCallProxy(t testing.TB, upstream string, b *Budget) *Proxy {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := StartProxy(ctx, ProxyConfig{Upstream: upstream, APIKey: realKey, Budget: b, PerCall: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Only the current call's Codex gets through: its own key, for its own model, until it ends.
func TestProxyAdmitsOnlyTheCurrentCallAndItsModel(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{fakemodel.Reply(fakemodel.Message("ok"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := perCallProxy(t, srv.URL, nil)
	key, revoke, err := p.CallKey("gpt-5.5")
	if err != nil {
		t.Fatal(err)
	}
	other, revokeOther, _ := p.CallKey("gpt-5.4")
	defer revokeOther()
	for _, tc := range []struct {
		name, auth, method, path, body string
		want                           int
		words                          string
	}{
		{"run-wide key", "Bearer " + p.ClientKey(), http.MethodPost, "/responses", `{"model":"gpt-5.5"}`, 401, "unknown client key"},
		{"another model", "Bearer " + key, http.MethodPost, "/responses", `{"model":"gpt-5.6-sol"}`, 403, "may ask for model gpt-5.5 only"},
		{"another call's model", "Bearer " + other, http.MethodPost, "/responses", `{"model":"gpt-5.5"}`, 403, "may ask for model gpt-5.4 only"},
		{"not a model route", "Bearer " + key, http.MethodPost, "/files", `{}`, 404, "is not forwarded"},
		{"background job route", "Bearer " + key, http.MethodGet, "/responses/resp_1", ``, 404, "is not forwarded"},
		{"background response", "Bearer " + key, http.MethodPost, "/responses", `{"model":"gpt-5.5","background":true}`, 403, "background responses are not forwarded"},
		{"the call's own", "Bearer " + key, http.MethodPost, "/responses", `{"model":"gpt-5.5"}`, 200, "response.completed"},
	} {
		status, body := do(t, tc.method, p.BaseURL()+tc.path, tc.auth, tc.body)
		if status != tc.want || !strings.Contains(body, tc.words) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, status, body, tc.want, tc.words)
		}
	}
	revoke()
	if status, _ := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+key, `{"model":"gpt-5.5"}`); status != 401 {
		t.Errorf("a revoked key got %d, want 401", status)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want only the admitted one", n)
	}
}

// A request that would start past the budget never reaches the model; the stop is counted for
// the Meter, in words the run reports.
func TestProxyRefusesARequestPastTheBudget(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		{Items: []fakemodel.Item{fakemodel.Message("ok")}, Usage: &fakemodel.Usage{InputTokens: 600, OutputTokens: 500}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b := NewBudget(spend.Limits{MaxTokens: 1000}, nil)
	p := perCallProxy(t, srv.URL, b)
	key, revoke, _ := p.CallKey("")
	defer revoke()
	if status, body := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+key, `{"model":"gpt-5.5"}`); status != 200 {
		t.Fatalf("first request: %d %s", status, body)
	}
	if got := b.Spent().Tokens; got != (spend.Tokens{Input: 600, Output: 500}) {
		t.Errorf("metered %+v, want the usage of response.completed", got)
	}
	status, body := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+key, `{"model":"gpt-5.5"}`)
	if status != 403 || !strings.Contains(body, "1,100 tokens used, max-tokens is 1,000") || !strings.Contains(body, budgetCode) {
		t.Errorf("past the budget: %d %q", status, body)
	}
	if n, stop := b.Stops(); n != 1 || stop == nil || stop.Limit != "max-tokens" {
		t.Errorf("stops = %d %+v", n, stop)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
	// max-cost cannot hold a model without a price: refused up front.
	b2 := NewBudget(spend.Limits{MaxCost: 5}, nil)
	p2 := perCallProxy(t, srv.URL, b2)
	k2, r2, _ := p2.CallKey("")
	defer r2()
	if status, body := do(t, http.MethodPost, p2.BaseURL()+"/responses", "Bearer "+k2, `{"model":"house-model"}`); status != 403 || !strings.Contains(body, "has no price known") {
		t.Errorf("unpriced model under max-cost: %d %q", status, body)
	}
}

// An answer that is not a stream (stream: false) carries its usage at the top; the proxy meters it too.
func TestProxyMetersAJSONAnswer(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1","usage":{"input_tokens":700,"input_tokens_details":{"cached_tokens":200},"output_tokens":40}}`)
	}))
	defer upstream.Close()
	b := NewBudget(spend.Limits{}, nil)
	p := perCallProxy(t, upstream.URL+"/v1", b)
	key, revoke, _ := p.CallKey("")
	defer revoke()
	if status, body := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+key, `{"model":"gpt-5.5","stream":false}`); status != 200 || !strings.Contains(body, "resp_1") {
		t.Fatalf("%d %s", status, body)
	}
	if got := b.Spent().Tokens; got != (spend.Tokens{Input: 700, CachedInput: 200, Output: 40}) {
		t.Errorf("metered %+v", got)
	}
}
