package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The whole action with the real Codex CLI against the scripted model server: a run is priced
// (status comment, job summary, usage output) and appended to the ledger; the next run is
// refused by the repository's daily cap, in a reply naming the spend so far and the cap; and
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
	inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_MODEL": "gpt-5.5", "INPUT_MAX-COST-PER-DAY": "0.20"}
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
