package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// BenchmarkSteerLatency measures what a writer waits for a steer, as users get it by default
// (the confined agent) on the app-server engine: the whole action with the real Codex CLI, the
// scripted model server and the emulator. The agent works in 1 s commands (a short tool call in
// flight); four steer comments are posted 6 s apart while it works, and each one's latency is
// from the comment's creation to the first model request that carries its text. It reports the
// p50 and p95 over every steer of every iteration (target: p95 at most 15 s), and the first
// progress: from the agent's first model request to the status comment's first edit that shows
// a command (target: at most 15 s).
//
//	go test -run XXX -bench BenchmarkSteerLatency -benchtime 3x ./cmd/studio/
func BenchmarkSteerLatency(b *testing.B) {
	bin := codextest.Bin(b)
	var steers, firsts []time.Duration
	for i := 0; i < b.N; i++ {
		var turns []fakemodel.Turn
		for j := 0; j < 45; j++ {
			turns = append(turns, fakemodel.Reply(fakemodel.Exec(fmt.Sprintf("c%d", j), "sleep 1")))
		}
		turns = append(turns, fakemodel.Reply(fakemodel.Message("DONE")), fakemodel.Reply(fakemodel.Message(fakecodex.PassingReview)))
		model, err := fakemodel.Start(fakemodel.Script{Turns: turns})
		if err != nil {
			b.Fatal(err)
		}
		w := newWorld(b, nil)
		n := w.issue("Make the jump snappier", taskBody)
		_, payload := w.comment(n, sandbox.Writer, "/studio run")
		inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_CODEX-ENGINE": "app-server"}
		done := make(chan result, 1)
		go func() { done <- w.run("issue_comment", payload, inputs) }()

		statusBody := func() string { return w.statusSoFar(n) }
		// The first progress: the first edit that shows a command, against the first request.
		deadline := time.Now().Add(2 * time.Minute)
		for !strings.Contains(statusBody(), "Running: ") && !strings.Contains(statusBody(), "1 command done") {
			if time.Now().After(deadline) {
				b.Fatalf("no progress on the status comment:\n%s", statusBody())
			}
			time.Sleep(50 * time.Millisecond)
		}
		shown := time.Now()
		if reqs := model.Requests(); len(reqs) > 0 {
			firsts = append(firsts, shown.Sub(reqs[0].At))
		}
		posted := map[string]time.Time{}
		for k := 0; k < 4; k++ {
			time.Sleep(6 * time.Second)
			text := fmt.Sprintf("STEER-%d-%d", i, k)
			w.comment(n, sandbox.Writer, "/studio steer "+text)
			posted[text] = time.Now()
		}
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			b.Fatal("the run never ended")
		}
		reqs := model.Requests()
		for text, at := range posted {
			i := slices.IndexFunc(reqs, func(r fakemodel.Request) bool { return strings.Contains(string(r.Body), text) })
			if i < 0 {
				b.Fatalf("steer %s never reached the model", text)
			}
			steers = append(steers, reqs[i].At.Sub(at))
		}
		model.Close()
	}
	slices.Sort(steers)
	slices.Sort(firsts)
	pct := func(d []time.Duration, p float64) time.Duration { return d[min(len(d)-1, int(float64(len(d))*p))] }
	b.ReportMetric(pct(steers, 0.5).Seconds(), "steer-p50-s")
	b.ReportMetric(pct(steers, 0.95).Seconds(), "steer-p95-s")
	b.ReportMetric(pct(firsts, 0.5).Seconds(), "first-progress-p50-s")
	b.Logf("%d steers: %v; first progress: %v", len(steers), steers, firsts)
	if p95 := pct(steers, 0.95); p95 > 15*time.Second {
		b.Logf("MISSED: steer p95 %s (target 15 s)", p95)
	}
}
