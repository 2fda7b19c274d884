package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/ledger"
	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The whole action with the real Codex CLI against the scripted model server: a run is priced
// (status comment, job summary, usage output) and appended to the ledger; the next run, the daily
// cap now lowered below that spend, is refused, in a reply naming the spend so far and the cap; and
// `studio spend` prints the ledger from a checkout and from the API.
func TestSpendDailyCapRefusesTheNextRun(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	// 100,000 input and 10,000 output tokens of gpt-5.5: $0.125 + $0.10 for the implementation,
	// and the review's 1,000 input tokens at $1.25 per million.
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		{Items: []fakemodel.Item{fakemodel.Exec("c1", "printf 'speed = 2\\n' > src/player/jump.gd")}, Usage: &fakemodel.Usage{InputTokens: 100_000, OutputTokens: 10_000}, Model: "gpt-5.5"},
		{Items: []fakemodel.Item{fakemodel.Message("DONE: src/player/jump.gd")}, Usage: &fakemodel.Usage{}, Model: "gpt-5.5"},
		{Items: []fakemodel.Item{fakemodel.Message(fakecodex.PassingReview)}, Usage: &fakemodel.Usage{InputTokens: 1000}, Model: "gpt-5.5"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	// The first run holds half of a $0.50 cap, enough for its $0.2263 (the cap holds in flight:
	// under a $0.20 cap the run would be stopped at its share).
	inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_MODEL": "gpt-5.5", "INPUT_MAX-COST-PER-DAY": "0.50"}
	w := newWorld(t, nil)
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	first := w.run("issue_comment", payload, inputs)
	if first.code != exitOK {
		t.Fatalf("first run: exit %d, outputs %v\n%s", first.code, first.outputs, first.stdout)
	}
	if first.outputs["status"] != "done" {
		t.Fatalf("first run: status %q\n%s", first.outputs["status"], w.botComments(n)[0].Body)
	}
	calls := len(model.Requests())
	if calls == 0 {
		t.Fatal("the first run made no model request")
	}
	cost := costOf(t, first)
	if cost == nil || *cost < 0.225 || *cost > 0.23 {
		t.Fatalf("first run cost = %v, want about $0.226 (usage %s)", cost, first.outputs["usage"])
	}
	const line = "Cost: $0.2263"
	if status := w.botComments(n)[0].Body; !strings.Contains(status, line) {
		t.Errorf("the status comment lacks %q:\n%s", line, status)
	}
	if summary, _ := w.Summary(); !strings.Contains(summary, line) {
		t.Errorf("the job summary lacks %q:\n%s", line, summary)
	}
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, spend.RefPrefix)
	if err != nil || len(refs) != 1 {
		t.Fatalf("ledger refs = %v, %v; want the month's", refs, err)
	}

	// The cap is reached: the next run is refused before it spends anything.
	inputs["INPUT_MAX-COST-PER-DAY"] = "0.20"
	_, payload = w.comment(n, sandbox.Writer, "/studio run")
	second := w.run("issue_comment", payload, inputs)
	if second.outputs["status"] != "refused" {
		t.Fatalf("second run: status %q, want refused\n%s", second.outputs["status"], second.stdout)
	}
	if len(model.Requests()) != calls {
		t.Errorf("the refused run reached the model: %d requests, had %d", len(model.Requests()), calls)
	}
	comments := w.botComments(n)
	reply := comments[len(comments)-1].Body
	for _, want := range []string{"budget reached", "spent $0.2263 today", "its cap (max-cost-per-day) is $0.20", "raise max-cost-per-day"} {
		if !strings.Contains(reply, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, reply)
		}
	}

	// `studio spend` from the API and from a checkout (which fetches the ledger ref).
	env := map[string]string{"GITHUB_TOKEN": w.Token, "GITHUB_REPOSITORY": sandbox.Owner + "/" + sandbox.Repo, "GITHUB_API_URL": strings.TrimSuffix(w.Emu.APIURL(), "/")}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "--quiet", w.Emu.GitURL(sandbox.Owner, sandbox.Repo), clone).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	month := time.Now().UTC().Format("2006-01")
	for name, args := range map[string][]string{"api": {"spend", "--api", "--month", month}, "checkout": {"spend", "--project", clone, "--month", month}} {
		code, out, errOut := runCLI(args, env)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
			continue
		}
		for _, want := range []string{"Spend for " + month + ": $0.2263 over 1 runs", "gameplay-programmer", "#" + strconv.Itoa(n)} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: studio spend lacks %q:\n%s", name, want, out)
			}
		}
	}
}

// max-cost between calls, through the action with the scripted Codex (which reports usage as
// Codex does, on turn.completed): at 80% the status comment warns; past it the review does not
// start, and the work done so far is pushed.
func TestMaxCostWarnsThenStopsBeforeTheReview(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, maxCost, status string
		want                  []string
	}{
		{"warning at 80%", "0.26", "done", []string{"Cost: $0.2250.", "**Budget warning:** $0.2250 spent, max-cost is $0.26 (over 80% of max-cost)"}},
		{"stop before the review", "0.20", "blocked", []string{"budget reached: stopped before the review: $0.2250 spent, max-cost is $0.20", "raise max-cost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, nil)
			n := w.issue("Jump", taskBody)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.scriptWith(fakecodex.Script{
				Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "kept\n"}}, Usage: &codex.Usage{InputTokens: 100_000, OutputTokens: 10_000}}},
				Reviews: []fakecodex.Call{{FinalMessage: fakecodex.PassingReview, Usage: &codex.Usage{}}},
			})
			res := w.run("issue_comment", payload, map[string]string{"INPUT_MODEL": "gpt-5.5", "INPUT_MAX-COST": tc.maxCost})
			if res.code != 0 || res.outputs["status"] != tc.status {
				t.Fatalf("exit %d status %q, want %s\n%s", res.code, res.outputs["status"], tc.status, res.stdout)
			}
			status := w.botComments(n)[0].Body
			for _, want := range tc.want {
				if !strings.Contains(status, want) {
					t.Errorf("the status comment lacks %q:\n%s", want, status)
				}
			}
			if tc.status == "blocked" {
				if len(w.reviews()) != 0 {
					t.Error("the review started past max-cost")
				}
				if got, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src/player/jump.gd")); err != nil || string(got) != "kept\n" {
					t.Errorf("the work before the stop must be pushed: %q, %v", got, err)
				}
			}
			if c := costOf(t, res); c == nil || *c != 0.225 {
				t.Errorf("usage cost = %v, want 0.225", c)
			}
		})
	}
}

// max-cost in flight, through the whole action with the real Codex CLI: the project prices
// gpt-5.5's output at $1,000 per million tokens (.codex/studio/config.json), so the answer's
// first half passes a max-cost of $1. The proxy ends the stream there and refuses Codex's retry;
// the run ends blocked with the file the call's first turn wrote pushed, and no review.
func TestMaxCostCutsTheCallMidStreamAndKeepsTheWork(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	long := strings.Repeat("the quick brown fox ", 1000) + strings.Repeat("LATE HALF ", 2000)
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		{Items: []fakemodel.Item{fakemodel.Exec("c1", "printf 'kept\\n' > src/player/jump.gd")}, Usage: &fakemodel.Usage{InputTokens: 1000, OutputTokens: 10}},
		{Items: []fakemodel.Item{fakemodel.Message(long)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/studio/config.json"] = `{"schemaVersion":1,"prices":{"gpt-5.5":{"input":0.01,"cachedInput":0.01,"output":1000}}}` + "\n"
	w := newWorld(t, files)
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_MODEL": "gpt-5.5", "INPUT_MAX-COST": "1"})
	if res.code != exitOK || res.outputs["status"] != "blocked" {
		t.Fatalf("exit %d status %q, want a blocked run\n%s", res.code, res.outputs["status"], res.stdout)
	}
	status := w.botComments(n)[0].Body
	for _, want := range []string{"budget reached: stopped the implementation in flight: $", "max-cost is $1.00", "run the command again"} {
		if !strings.Contains(status, want) {
			t.Errorf("the status comment lacks %q:\n%s", want, status)
		}
	}
	if strings.Contains(status, "max fix passes") || strings.Contains(status, "LATE HALF") {
		t.Errorf("the stop reads as a failed pass, or the cut text arrived:\n%s", status)
	}
	if got, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src/player/jump.gd")); err != nil || string(got) != "kept\n" {
		t.Errorf("the work before the cut must be pushed: %q, %v", got, err)
	}
	// The two turns reached the model; the retry after the cut and any review did not.
	if reqs := len(model.Requests()); reqs != 2 {
		t.Errorf("the model saw %d requests, want 2", reqs)
	}
	if c := costOf(t, res); c == nil || *c < 1 {
		t.Errorf("usage cost = %v, want the estimate past $1", c)
	}
}

// The ledger after three runs of the whole action with the real Codex CLI: one commit each on
// the month's ref, the running totals adding up, and `studio spend` summing them per issue.
func TestLedgerAfterThreeRealRuns(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	// Each report: 10,000 input and 1,000 output tokens of gpt-5.5, $0.0125 + $0.01.
	turn := fakemodel.Turn{Items: []fakemodel.Item{fakemodel.Message("Status: on track.")}, Usage: &fakemodel.Usage{InputTokens: 10_000, OutputTokens: 1000}, Model: "gpt-5.5"}
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{turn, turn, turn}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_MODEL": "gpt-5.5"}
	w := newWorld(t, nil)
	issues := []int{w.issue("Where are we?", "Where are we?\n\n```studio\nrole: producer\n```\n"), w.issue("And now?", "And now?\n\n```studio\nrole: producer\n```\n")}
	for i, n := range []int{issues[0], issues[1], issues[0]} {
		_, payload := w.comment(n, sandbox.Writer, "/studio run")
		res := w.run("issue_comment", payload, inputs)
		if res.code != exitOK || res.outputs["status"] != "done" {
			t.Fatalf("run %d: exit %d status %q\n%s", i+1, res.code, res.outputs["status"], res.stdout)
		}
	}
	if n := model.Remaining(); n != 0 {
		t.Fatalf("%d scripted turns unused", n)
	}
	env := map[string]string{"GITHUB_TOKEN": w.Token, "GITHUB_REPOSITORY": sandbox.Owner + "/" + sandbox.Repo, "GITHUB_API_URL": strings.TrimSuffix(w.Emu.APIURL(), "/")}
	month := time.Now().UTC().Format("2006-01")
	code, out, errOut := runCLI([]string{"spend", "--api", "--month", month}, env)
	if code != 0 {
		t.Fatalf("studio spend: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Spend for " + month + ": $0.0675 over 3 runs",
		"producer        $0.0675    3 runs  33,000 tokens",
		"#" + strconv.Itoa(issues[0]) + "              $0.0450    2 runs",
		"#" + strconv.Itoa(issues[1]) + "              $0.0225    1 runs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("studio spend lacks %q:\n%s", want, out)
		}
	}
}

func TestSpendCommandRefusesABadMonthAndSaysWhenEmpty(t *testing.T) {
	t.Parallel()
	if code, _, errOut := runCLI([]string{"spend", "--month", "2026-13"}, nil); code != exitUsage || !strings.Contains(errOut, "--month takes yyyy-mm") {
		t.Errorf("bad month: exit %d %q", code, errOut)
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	code, out, errOut := runCLI([]string{"spend", "--project", dir, "--no-fetch", "--month", "2026-12"}, nil)
	if code != 0 || !strings.Contains(out, "No spend recorded for 2026-12 (refs/studio/spend/2026-12 has no runs).") {
		t.Errorf("empty ledger: exit %d %q %q", code, out, errOut)
	}
	// Without --no-fetch, a checkout with no origin says it could not fetch, then shows what it has.
	code, out, errOut = runCLI([]string{"spend", "--project", dir, "--month", "2026-12"}, nil)
	if code != 0 || !strings.Contains(errOut, "note: could not fetch the ledger from origin") || !strings.Contains(out, "No spend recorded") {
		t.Errorf("no origin: exit %d %q %q", code, out, errOut)
	}
}

// Two runs of the whole action at once, each on its own runner and issue, both with the real
// Codex CLI: both append to the month's ledger, and neither entry is lost.
func TestTwoRealRunsAppendToTheLedgerAtOnce(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	turn := fakemodel.Turn{Items: []fakemodel.Item{fakemodel.Message("Status: on track.")}, Usage: &fakemodel.Usage{InputTokens: 10_000, OutputTokens: 1000}, Model: "gpt-5.5"}
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{turn, turn}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	first := newWorld(t, nil)
	other, err := first.SecondRunner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	second := &world{World: other, t: t, codex: first.codex}
	var payloads [2][]byte
	for i := range payloads {
		n := first.issue(fmt.Sprintf("Report %d", i+1), "Where are we?\n\n```studio\nrole: producer\n```\n")
		_, payloads[i] = first.comment(n, sandbox.Writer, "/studio run")
	}
	// Each run creates two refs through the API: its issue lock, at the start, and the month's
	// ledger, at the end. The ledger's creation is held for two seconds, so the other run reads
	// the ledger (none yet) while the first's creation is on its way: both try to create it.
	first.Emu.InjectFaults(
		ghemu.Fault{Method: "POST", Path: "/repos/acme/hop/git/refs", Kind: ghemu.FaultSlow, Times: 2},
		ghemu.Fault{Method: "POST", Path: "/repos/acme/hop/git/refs", Kind: ghemu.FaultSlow, Delay: 2 * time.Second, Times: 2},
	)
	var wg sync.WaitGroup
	var results [2]result
	start := make(chan struct{})
	for i, w := range []*world{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// The exec engine keeps no thread, so the ledger's is each run's only ref created at
			// its end (the app server's kept thread creates one more, which would take the delay).
			results[i] = w.run("issue_comment", payloads[i], map[string]string{
				"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_MODEL": "gpt-5.5", "GITHUB_RUN_ID": strconv.Itoa(5001 + i),
				"INPUT_CODEX-ENGINE": "exec"})
		}()
	}
	close(start)
	wg.Wait()
	for i, res := range results {
		if res.code != exitOK || res.outputs["status"] != "done" {
			t.Fatalf("run %d: exit %d status %q\n%s", i+1, res.code, res.outputs["status"], res.stdout)
		}
		if strings.Contains(res.stdout, "could not record this run's spend") {
			t.Errorf("run %d lost its ledger entry:\n%s", i+1, res.stdout)
		}
	}
	lost := 0
	for _, r := range first.Emu.Requests() {
		if r.Method == "POST" && r.Path == "/repos/acme/hop/git/refs" && r.Status == 422 {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("%d ledger creations lost the race, want 1: the two runs did not append at once", lost)
	}
	gh, err := hub.NewClient(nil, first.Emu.APIURL(), first.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ledger.Read(context.Background(), gh, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, r := range recs {
		runs[r.Run] = true
	}
	if len(recs) != 2 || !runs["5001"] || !runs["5002"] || len(recs[0].Models) != 1 || recs[0].Models[0] != "gpt-5.5" {
		t.Fatalf("ledger = %+v, want both runs", recs)
	}
	if tip := recs[1]; tip.Runs != 2 || tip.MonthUSD != 0.045 {
		t.Errorf("tip totals: %d runs, $%v; want 2 runs, $0.045", tip.Runs, tip.MonthUSD)
	}
}

// Two runs start at the same moment with $0.10 left under the daily cap, each with a max-cost of
// $0.50: the cap check and the run's hold are one swap on the ledger, so each holds a share of
// the $0.10 (never its max-cost past the cap, as a run once did), the shares add up to no more
// than the $0.10, and both start. Each run's entry settles its hold, so nothing stays held after.
func TestTwoRunsNearTheCapShareWhatIsLeft(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	turn := fakemodel.Turn{Items: []fakemodel.Item{fakemodel.Message("Status: on track.")}, Usage: &fakemodel.Usage{InputTokens: 10_000, OutputTokens: 1000}, Model: "gpt-5.5"}
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{turn, turn}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	first := newWorld(t, nil)
	other, err := first.SecondRunner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	second := &world{World: other, t: t, codex: first.codex}
	gh, err := hub.NewClient(nil, first.Emu.APIURL(), first.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ledger.Append(ctx, gh, spend.Entry{Run: "earlier", At: time.Now().UTC(), Cost: func(v float64) *float64 { return &v }(0.9)}); err != nil {
		t.Fatal(err)
	}
	var payloads [2][]byte
	var issues [2]int
	for i := range payloads {
		issues[i] = first.issue(fmt.Sprintf("Report %d", i+1), "Where are we?\n\n```studio\nrole: producer\n```\n")
		_, payloads[i] = first.comment(issues[i], sandbox.Writer, "/studio run")
	}
	var wg sync.WaitGroup
	var results [2]result
	start := make(chan struct{})
	for i, w := range []*world{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = w.run("issue_comment", payloads[i], map[string]string{
				"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_MODEL": "gpt-5.5", "GITHUB_RUN_ID": strconv.Itoa(6001 + i),
				"INPUT_MAX-COST-PER-DAY": "1.00", "INPUT_MAX-COST": "0.50"})
		}()
	}
	close(start)
	wg.Wait()
	for i, res := range results {
		if res.outputs["status"] != "done" {
			t.Fatalf("run %d: status %q, want done: the $0.10 left is shared\n%s", i+1, res.outputs["status"], res.stdout)
		}
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests, want each run's 1", n)
	}
	recs, err := ledger.Read(ctx, gh, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	holders := map[string]bool{}
	for _, r := range recs {
		if r.Kind == spend.KindHold {
			holders[r.Run] = true
			if held := spend.Held(&r, r.At); held > 0.1 {
				t.Errorf("the holds add up to %v, past the $0.10 the cap leaves: %+v", held, r.Holds)
			}
		}
	}
	if len(holders) != 2 {
		t.Errorf("runs that held a share: %v, want both", holders)
	}
	tip, err := ledger.Tip(ctx, gh, time.Now())
	if err != nil || tip == nil {
		t.Fatalf("tip = %+v, %v", tip, err)
	}
	if !tip.IsRun() || len(tip.Holds) != 0 || tip.Runs != 3 || tip.DayUSD != 0.945 {
		t.Errorf("tip after the runs: %+v; want the last entry, no hold open, 3 runs, $0.945", tip)
	}
}
