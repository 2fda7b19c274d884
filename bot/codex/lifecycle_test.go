package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted is a Runner that answers calls in order and records them. It fails the test on a call
// it has no answer for, and Verify reports answers that were never used.
type scripted struct {
	t       *testing.T
	mu      sync.Mutex
	answers []func(req Request) Result
	calls   []Request
}

func (s *scripted) Run(_ context.Context, req Request) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, req)
	if len(s.answers) == 0 {
		s.t.Errorf("unexpected Codex call %d (%s)", len(s.calls), req.Phase)
		return Result{ExitCode: 1, Model: req.Model.Model}
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	res := a(req)
	res.Model = req.Model.Model
	return res
}

func (s *scripted) verify() {
	s.t.Helper()
	if len(s.answers) > 0 {
		s.t.Errorf("%d scripted Codex answers were never used", len(s.answers))
	}
}

func answer(msg string) func(Request) Result {
	return func(Request) Result { return Result{FinalMessage: msg} }
}

func failWith(code int, stderr string) func(Request) Result {
	return func(Request) Result { return Result{ExitCode: code, Stderr: stderr} }
}

// refusedWith answers as the real CLI does when the model API refuses the call: exit 1, and the
// API's words in the error item and turn.failed.
func refusedWith(msg string) func(Request) Result {
	return func(Request) Result {
		return Result{ExitCode: 1, Events: EventSummary{Events: 4, Errors: []string{msg}, TurnFailed: msg}}
	}
}

const (
	badKey    = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-CANA***2b., url: http://127.0.0.1:1/v1/responses"
	badKeyWhy = "the model API refused the call (HTTP 401): Incorrect API key provided: sk-CANA***2b."
	noModel   = "The model `gpt-5.6-luna` does not exist or you do not have access to it."
)

const (
	passVerdict  = `{"blockers":[],"warnings":[],"summary":"looks right","needsFix":false}`
	blockVerdict = `{"blockers":[{"message":"jump height ignores gravity","file":"src/jump.gd","line":7}],"warnings":["no changelog"],"summary":"one bug","needsFix":true}`
)

func testRoutes(t *testing.T) routing.RoutePlan {
	t.Helper()
	r, err := routing.ResolveRoutes(routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "low"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fixPrompt(t *testing.T, got *[]FixInput) FixPromptFunc {
	return func(_ context.Context, in FixInput) (string, error) {
		*got = append(*got, in)
		return fmt.Sprintf("Fix pass %d. Blockers:\n- %s", in.Pass, strings.Join(in.Blockers, "\n- ")), nil
	}
}

func TestLifecycleScenarios(t *testing.T) {
	dir := t.TempDir()
	pass := VerifyCommand{Command: script(t, dir, "pass.sh", "echo ok")}
	fail := VerifyCommand{Command: script(t, dir, "fail.sh", "echo 'FAIL jump_test' >&2; exit 1")}
	// flaky passes from the second run on: a fix pass "repairs" it.
	flaky := VerifyCommand{Command: script(t, dir, "flaky.sh", `if [ -e "$0.ran" ]; then echo ok; else touch "$0.ran"; echo 'FAIL once' >&2; exit 1; fi`)}

	tests := []struct {
		name         string
		answers      []func(Request) Result
		verify       *VerifyCommand
		review       bool
		fix          bool
		maxFix       int
		wantStatus   string
		wantReason   string
		wantPhases   []string
		wantFixes    int
		wantLastLine []string
	}{
		{name: "implementation only: done when codex succeeds", answers: []func(Request) Result{answer("did it")},
			wantStatus: "done", wantPhases: []string{"implement"}, wantLastLine: []string{"final status: done"}},
		{name: "implementation only: blocked when codex fails", answers: []func(Request) Result{failWith(1, "boom")},
			wantStatus: "blocked", wantReason: "Codex call failed (exit=1)", wantPhases: []string{"implement"}},
		{name: "failed verification skips the review and a fix pass repairs it", verify: &flaky, review: true, fix: true, maxFix: 2,
			answers:    []func(Request) Result{answer("impl"), answer("fixed"), answer(passVerdict)},
			wantStatus: "done", wantPhases: []string{"implement", "fix", "review"}, wantFixes: 1},
		{name: "review blocks, fix clears it", verify: &pass, review: true, fix: true, maxFix: 1,
			answers:    []func(Request) Result{answer("impl"), answer(blockVerdict), answer("fixed"), answer(passVerdict)},
			wantStatus: "done", wantPhases: []string{"implement", "review", "fix", "review"}, wantFixes: 1},
		{name: "review keeps blocking until max passes", review: true, fix: true, maxFix: 2,
			answers:    []func(Request) Result{answer("impl"), answer(blockVerdict), answer("f1"), answer(blockVerdict), answer("f2"), answer(blockVerdict)},
			wantStatus: "blocked", wantReason: "reached max fix passes (2)", wantFixes: 2,
			wantPhases:   []string{"implement", "review", "fix", "review", "fix", "review"},
			wantLastLine: []string{"blocked: reached max fix passes (2)", "final status: blocked"}},
		{name: "max fix passes 0 with a fix prompt prints the seed's line", verify: &fail, fix: true, maxFix: 0,
			answers: []func(Request) Result{answer("impl")}, wantStatus: "blocked", wantReason: "reached max fix passes (0)", wantPhases: []string{"implement"},
			wantLastLine: []string{"blocked: reached max fix passes (0)", "final status: blocked"}},
		{name: "malformed review JSON blocks", review: true,
			answers: []func(Request) Result{answer("impl"), answer("LGTM!")}, wantStatus: "blocked",
			wantReason: "review blocked: malformed review JSON (review output did not contain a JSON object)", wantPhases: []string{"implement", "review"}},
		{name: "fix passes are capped at 5", verify: &fail, fix: true, maxFix: 9,
			answers:    []func(Request) Result{answer("impl"), answer("f"), answer("f"), answer("f"), answer("f"), answer("f")},
			wantStatus: "blocked", wantReason: "reached max fix passes (5)", wantFixes: 5,
			wantPhases: []string{"implement", "fix", "fix", "fix", "fix", "fix"}},
		{name: "a timed-out call ends the run without fix passes", review: true, fix: true, maxFix: 3,
			answers: []func(Request) Result{func(Request) Result {
				return Result{ExitCode: -1, Signal: "SIGTERM", TimedOut: true, Err: errors.New("codex timed out after 10m0s")}
			}},
			wantStatus: "blocked", wantReason: "codex timed out after 10m0s", wantPhases: []string{"implement"},
			wantLastLine: []string{"blocked: codex timed out after 10m0s", "final status: blocked"}},
		// A call the model API refuses ends the run at once: a fix pass or a review would only
		// be refused again.
		{name: "a refused implementation ends the run as error without verification, review or fix", verify: &pass, review: true, fix: true, maxFix: 3,
			answers:    []func(Request) Result{refusedWith(badKey)},
			wantStatus: "error", wantReason: badKeyWhy, wantPhases: []string{"implement"},
			wantLastLine: []string{"error: " + badKeyWhy, "final status: error"}},
		{name: "a refused review ends the run as error without a fix pass", review: true, fix: true, maxFix: 3,
			answers:    []func(Request) Result{answer("impl"), refusedWith("Quota exceeded. Check your plan and billing details.")},
			wantStatus: "error", wantReason: "the model API refused the call: Quota exceeded. Check your plan and billing details.", wantPhases: []string{"implement", "review"},
			wantLastLine: []string{"error: the model API refused the call: Quota exceeded. Check your plan and billing details.", "final status: error"}},
		{name: "a refused fix pass ends the run as error", verify: &fail, fix: true, maxFix: 3,
			answers:    []func(Request) Result{answer("impl"), refusedWith("exceeded retry limit, last status: 429 Too Many Requests")},
			wantStatus: "error", wantReason: "the model API refused the call (HTTP 429): exceeded retry limit, last status: 429 Too Many Requests",
			wantPhases: []string{"implement", "fix"}, wantFixes: 1},
		{name: "an unavailable model gets its one fallback, and a refused fallback ends the run", review: true, fix: true, maxFix: 3,
			answers:    []func(Request) Result{refusedWith(noModel), refusedWith("The model `gpt-5.6-terra` does not exist or you do not have access to it.")},
			wantStatus: "error", wantReason: "the model API refused the call: The model `gpt-5.6-terra` does not exist or you do not have access to it.",
			wantPhases: []string{"implement", "implement"}},
		{name: "an unavailable model whose fallback answers goes on", review: true,
			answers:    []func(Request) Result{refusedWith(noModel), answer("impl on the fallback"), answer(passVerdict)},
			wantStatus: "done", wantPhases: []string{"implement", "implement", "review"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(flaky.Command + ".ran")
			runner := &scripted{t: t, answers: tc.answers}
			var fixes []FixInput
			plan := Plan{Workdir: dir, Sandbox: "danger-full-access", Routes: testRoutes(t), Prompt: "implement", Verify: tc.verify, MaxFixPasses: tc.maxFix}
			if tc.review {
				plan.ReviewPrompt = "review"
			}
			if tc.fix {
				plan.FixPrompt = fixPrompt(t, &fixes)
			}
			out, err := (&Lifecycle{Runner: runner}).Run(context.Background(), plan)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			runner.verify()
			if out.FinalStatus != tc.wantStatus || out.Reason != tc.wantReason {
				t.Errorf("status %q reason %q, want %q %q\n%s", out.FinalStatus, out.Reason, tc.wantStatus, tc.wantReason, out.Output())
			}
			var phases []string
			for _, c := range runner.calls {
				phases = append(phases, c.Phase)
			}
			if !slices.Equal(phases, tc.wantPhases) {
				t.Errorf("phases = %v, want %v", phases, tc.wantPhases)
			}
			if len(out.FixPasses) != tc.wantFixes || len(fixes) != tc.wantFixes {
				t.Errorf("fix passes = %d (prompts %d), want %d", len(out.FixPasses), len(fixes), tc.wantFixes)
			}
			if n := len(tc.wantLastLine); n > 0 && !slices.Equal(out.Lines[len(out.Lines)-n:], tc.wantLastLine) {
				t.Errorf("last lines = %q, want %q", out.Lines[len(out.Lines)-n:], tc.wantLastLine)
			}
		})
	}
}

func TestLifecycleRoutesSandboxesHooksAndGolden(t *testing.T) {
	dir := t.TempDir()
	runs := t.TempDir()
	script(t, dir, "check.sh", "echo all tests passed")
	// Relative to the workspace, so the golden output does not hold a temp path.
	pass := VerifyCommand{Command: "./check.sh", Args: []string{"--all"}}
	runner := &scripted{t: t, answers: []func(Request) Result{answer("implemented jump"), answer(blockVerdict), answer("fixed gravity"), answer(passVerdict)}}
	ev, err := NewEvidence(runs, "20261129185400123-42-1", "gameplay-programmer", nil)
	if err != nil {
		t.Fatal(err)
	}
	var fixes []FixInput
	var events []string
	lc := &Lifecycle{
		Runner:   runner,
		Evidence: ev,
		Now:      func() time.Time { return time.Date(2026, 11, 29, 18, 54, 0, 123e6, time.UTC) },
		Hooks: Hooks{
			AfterChange: func(_ context.Context, pass int, exe Execution) error {
				events = append(events, fmt.Sprintf("change %d %s", pass, exe.Result.FinalMessage))
				return nil
			},
			AfterVerify: func(_ context.Context, pass int, v VerificationResult) error {
				events = append(events, fmt.Sprintf("verify %d failed=%v", pass, v.Failed()))
				return nil
			},
			AfterReview: func(_ context.Context, pass int, r ReviewOutcome) error {
				events = append(events, fmt.Sprintf("review %d failed=%v", pass, r.Failed()))
				return nil
			},
		},
	}
	plan := Plan{
		Info: RunInfo{RunID: "20261129185400123-42-1", Role: "gameplay-programmer", Task: "Add a jump", WritePolicy: "workspace", AllowFileEdits: true,
			Eligibility: policy.Evaluate(policy.EligibilityInput{ProjectStage: policy.StagePrototype, StudioMode: policy.ModeFastPrototype, Phase: policy.PhaseImplement})},
		Workdir: dir, Sandbox: "danger-full-access", Routes: testRoutes(t),
		Prompt: "Implement the jump.", ReviewPrompt: "Review the jump.", FixPrompt: fixPrompt(t, &fixes), MaxFixPasses: 2,
		Verify: &pass, CallTimeout: 7 * time.Minute,
	}
	out, err := lc.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	runner.verify()
	if out.FinalStatus != StatusDone {
		t.Fatalf("status = %s\n%s", out.FinalStatus, out.Output())
	}

	wantEvents := []string{"change 0 implemented jump", "verify 0 failed=false", "review 0 failed=true",
		"change 1 fixed gravity", "verify 1 failed=false", "review 1 failed=false"}
	if !slices.Equal(events, wantEvents) {
		t.Errorf("hooks = %q, want %q", events, wantEvents)
	}

	// Routes and sandboxes per call: luna implements, terra reviews read-only, fixes escalate to terra.
	type call struct{ phase, model, effort, sandbox string }
	var got []call
	for _, c := range runner.calls {
		got = append(got, call{c.Phase, c.Model.Model, c.Model.Effort, c.Sandbox})
		if c.Timeout != 7*time.Minute {
			t.Errorf("%s timeout = %s", c.Phase, c.Timeout)
		}
		if (c.Phase == "review") != (c.OutputSchema != "") {
			t.Errorf("%s output schema = %q", c.Phase, c.OutputSchema)
		}
	}
	want := []call{
		{"implement", "gpt-5.6-luna", "low", "danger-full-access"},
		{"review", "gpt-5.6-terra", "medium", "read-only"},
		{"fix", "gpt-5.6-terra", "medium", "danger-full-access"},
		{"review", "gpt-5.6-terra", "medium", "read-only"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %+v, want %+v", got, want)
	}

	// The fix prompt carries the real blocker, and the seed's summary section.
	if len(fixes) != 1 || !slices.Equal(fixes[0].Blockers, []string{"src/jump.gd:7: jump height ignores gravity"}) {
		t.Fatalf("fix input = %+v", fixes)
	}
	fixReq := runner.calls[2].Prompt
	if !strings.HasPrefix(fixReq, "Fix pass 1. Blockers:\n- src/jump.gd:7: jump height ignores gravity\n\n# Previous run summary\n\nimplementation: exit=0") {
		t.Errorf("fix prompt = %q", fixReq)
	}
	if rp := runner.calls[1].Prompt; !strings.HasPrefix(rp, "Review the jump.\n\n# Implementation and verification output\n\nimplementation: exit=0 model=gpt-5.6-luna") {
		t.Errorf("review prompt = %q", rp)
	}

	checkGolden(t, "lifecycle-review-fix-output.txt", out.Output()+"\n")
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(ev.Dir, rel))
		if err != nil {
			t.Fatalf("evidence %s: %v", rel, err)
		}
		return string(data)
	}
	if read("output.txt") != out.Output()+"\n" {
		t.Errorf("output.txt differs from the outcome's lines")
	}
	meta := strings.ReplaceAll(read("metadata.json"), ev.Dir, "<run>")
	checkGolden(t, "lifecycle-metadata.json", meta)
	var files []string
	_ = filepath.WalkDir(ev.Dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, rel(ev, path))
		}
		return nil
	})
	checkGolden(t, "lifecycle-evidence-files.txt", strings.Join(files, "\n")+"\n")
	if v := read("steps/03-review/verdict.json"); !strings.Contains(v, "jump height ignores gravity") {
		t.Errorf("verdict.json = %s", v)
	}
	if r := read("result.json"); !strings.Contains(r, `"finalStatus": "done"`) {
		t.Errorf("result.json = %s", r)
	}
}

func TestLifecycleHookErrorBlocks(t *testing.T) {
	runner := &scripted{t: t, answers: []func(Request) Result{answer("impl")}}
	lc := &Lifecycle{Runner: runner, Hooks: Hooks{AfterChange: func(context.Context, int, Execution) error {
		return errors.New("push studio/task-4: permission denied")
	}}}
	out, err := lc.Run(context.Background(), Plan{Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", ReviewPrompt: "r"})
	if err == nil || !strings.Contains(err.Error(), "after implementation: push studio/task-4: permission denied") {
		t.Fatalf("err = %v", err)
	}
	if out.FinalStatus != StatusBlocked || out.Lines[len(out.Lines)-1] != "final status: blocked" {
		t.Errorf("outcome = %s %q", out.FinalStatus, out.Lines)
	}
	if len(runner.calls) != 1 {
		t.Errorf("the review must not run after a failed hook; calls = %d", len(runner.calls))
	}
}

func TestLifecycleAfterChangeSeesFailedCalls(t *testing.T) {
	// A failed or timed-out call may still have edited files; the bot must get the chance to
	// commit them before the fix pass.
	runner := &scripted{t: t, answers: []func(Request) Result{failWith(1, "crashed"), answer("fixed")}}
	var seen []string
	lc := &Lifecycle{Runner: runner, Hooks: Hooks{AfterChange: func(_ context.Context, pass int, exe Execution) error {
		seen = append(seen, fmt.Sprintf("%d failed=%v", pass, exe.Failed()))
		return nil
	}}}
	out, err := lc.Run(context.Background(), Plan{Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", FixPrompt: fixPrompt(t, new([]FixInput)), MaxFixPasses: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"0 failed=true", "1 failed=false"}) || out.FinalStatus != StatusDone {
		t.Errorf("AfterChange saw %q, status %s", seen, out.FinalStatus)
	}
}

func TestLifecycleBoundsFixBlockers(t *testing.T) {
	var blockers []string
	for i := 1; i <= 12; i++ {
		blockers = append(blockers, fmt.Sprintf(`"b%d"`, i))
	}
	verdict := `{"blockers":[` + strings.Join(blockers, ",") + `],"warnings":[],"summary":"many","needsFix":true}`
	runner := &scripted{t: t, answers: []func(Request) Result{answer("impl"), answer(verdict), answer("fix"), answer(passVerdict)}}
	var fixes []FixInput
	_, err := (&Lifecycle{Runner: runner}).Run(context.Background(), Plan{Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", ReviewPrompt: "r", FixPrompt: fixPrompt(t, &fixes), MaxFixPasses: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(fixes) != 1 || len(fixes[0].Blockers) != MaxFixBlockers || fixes[0].Blockers[7] != "b8" {
		t.Errorf("fix blockers = %+v", fixes)
	}
}

func TestLifecycleRedactsSecrets(t *testing.T) {
	const secret = "ghs_lifecycle_canary_token"
	runs := t.TempDir()
	red := NewRedactor(secret)
	ev, err := NewEvidence(runs, "id", "role", red)
	if err != nil {
		t.Fatal(err)
	}
	runner := &scripted{t: t, answers: []func(Request) Result{
		func(Request) Result { return Result{FinalMessage: "I saw " + secret, Stderr: "env: " + secret} },
	}}
	var streamed []string
	lc := &Lifecycle{Runner: runner, Evidence: ev, Redactor: red, Hooks: Hooks{OnLine: func(l string) { streamed = append(streamed, l) }}}
	out, err := lc.Run(context.Background(), Plan{Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "task pasted a token: " + secret})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(runner.calls[0].Prompt, secret) {
		t.Errorf("prompt sent to Codex holds the secret")
	}
	if strings.Contains(out.Output(), secret) || strings.Contains(strings.Join(streamed, "\n"), secret) {
		t.Errorf("lines hold the secret: %q", out.Output())
	}
	_ = filepath.WalkDir(runs, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(path); strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret", path)
			}
		}
		return nil
	})
}

func TestLifecycleCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runner := &scripted{t: t, answers: []func(Request) Result{func(Request) Result {
		cancel()
		return Result{ExitCode: -1, Err: errors.New("codex canceled: context canceled")}
	}}}
	out, err := (&Lifecycle{Runner: runner}).Run(ctx, Plan{Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", FixPrompt: fixPrompt(t, new([]FixInput)), MaxFixPasses: 3})
	if !errors.Is(err, context.Canceled) || out.FinalStatus != StatusBlocked {
		t.Errorf("err = %v status = %s", err, out.FinalStatus)
	}
}

func TestRunIDs(t *testing.T) {
	ids := &RunIDs{Now: func() time.Time { return time.Date(2026, 11, 29, 18, 54, 7, 89e6, time.FixedZone("CET", 3600)) }, PID: 4242}
	if got := ids.Next(); got != "20261129175407089-4242-1" {
		t.Errorf("first id = %s", got)
	}
	if got := ids.Next(); got != "20261129175407089-4242-2" {
		t.Errorf("second id = %s", got)
	}
}

// A refused review after an implementation that wrote: the work was handed to AfterChange (the
// bot commits it), the refused review is not handed to AfterReview (there is no verdict to post),
// and the outcome and result.json carry the refusal.
func TestLifecycleRefusalKeepsEarlierWorkAndPostsNoReview(t *testing.T) {
	runs := t.TempDir()
	ev, err := NewEvidence(runs, "20261129185400123-42-1", "gameplay-programmer", nil)
	if err != nil {
		t.Fatal(err)
	}
	runner := &scripted{t: t, answers: []func(Request) Result{answer("implemented jump"), refusedWith(badKey)}}
	var changes, reviews []int
	var fixes []FixInput
	lc := &Lifecycle{Runner: runner, Evidence: ev, Hooks: Hooks{
		AfterChange: func(_ context.Context, pass int, _ Execution) error { changes = append(changes, pass); return nil },
		AfterReview: func(_ context.Context, pass int, _ ReviewOutcome) error { reviews = append(reviews, pass); return nil },
	}}
	out, err := lc.Run(context.Background(), Plan{Workdir: t.TempDir(), Sandbox: "danger-full-access", Routes: testRoutes(t), Prompt: "implement",
		ReviewPrompt: "review", FixPrompt: fixPrompt(t, &fixes), MaxFixPasses: 2})
	if err != nil {
		t.Fatal(err)
	}
	runner.verify()
	if !slices.Equal(changes, []int{0}) || len(reviews) != 0 || len(fixes) != 0 {
		t.Errorf("AfterChange %v, AfterReview %v, fix prompts %d: want the implementation's change only", changes, reviews, len(fixes))
	}
	ref := out.Refusal
	if out.FinalStatus != StatusError || ref == nil || ref.Kind != RefusedKey || ref.Status != 401 || ref.Model != "gpt-5.6-terra" || !slices.Equal(out.Blockers, []string{badKeyWhy}) {
		t.Fatalf("outcome %s refusal %+v blockers %q", out.FinalStatus, ref, out.Blockers)
	}
	data, err := os.ReadFile(filepath.Join(ev.Dir, "result.json"))
	var saved struct{ Refusal *APIRefusal }
	if err == nil {
		err = json.Unmarshal(data, &saved)
	}
	if err != nil || saved.Refusal == nil || *saved.Refusal != *ref {
		t.Errorf("result.json refusal = %+v (%v), want %+v", saved.Refusal, err, *ref)
	}
}
