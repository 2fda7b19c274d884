package codex

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/spend"
)

// BenchmarkProxyStream streams a 2,000-event answer (about 1 MB of deltas) through the proxy,
// unmetered and metered, so the cost of reading every event is a number, not a guess.
func BenchmarkProxyStream(b *testing.B) {
	var sse strings.Builder
	delta := strings.Repeat("x", 480)
	for i := range 2000 {
		fmt.Fprintf(&sse, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":%q,\"seq\":%d}\n\n", delta, i)
	}
	sse.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n\n")
	body := sse.String()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	defer upstream.Close()
	for _, metered := range []bool{false, true} {
		b.Run(fmt.Sprintf("metered=%v", metered), func(b *testing.B) {
			var budget *Budget
			if metered {
				budget = NewBudget(spend.Limits{MaxCost: 1e9}, nil)
			}
			p := perCallProxy(b, upstream.URL+"/v1", budget)
			key, revoke, _ := p.CallKey("")
			defer revoke()
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for range b.N {
				req, _ := http.NewRequest(http.MethodPost, p.BaseURL()+"/responses", strings.NewReader(`{"model":"gpt-5.5"}`))
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != int64(len(body)) {
					b.Fatalf("streamed %d of %d bytes", n, len(body))
				}
			}
		})
	}
}
