package codex

import (
	"context"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Limits from the issue and the context contract.
const (
	// MaxFixPassesCap bounds fix passes whatever the input says: each pass is a full Codex call
	// and a commit, and a review that never passes should end in "blocked", not in a bill.
	MaxFixPassesCap = 5
	// MaxFixBlockers bounds the blockers a fix prompt carries, as the context contract does.
	MaxFixBlockers = 8
)

// Final statuses.
const (
	StatusDone    = "done"
	StatusBlocked = "blocked"
	// StatusError: the model API refused a call (Outcome.Refusal); the run stopped at once.
	StatusError = "error"
)

// FixInput is what a fix prompt is built from.
type FixInput struct {
	Pass        int      // 1-based
	Blockers    []string // the real blockers of the previous attempt, at most MaxFixBlockers
	OutputSoFar string   // the lifecycle lines so far, joined as in output.txt
}

// FixPromptFunc renders the fix prompt (the prompts package owns the text). The lifecycle appends
// "# Previous run summary" and the output so far, as the seed does.
type FixPromptFunc func(ctx context.Context, in FixInput) (string, error)

// RunInfo is what metadata.json needs beyond the plan; the bot knows it, the runtime does not.
type RunInfo struct {
	RunID          string
	Role           string
	Task           string
	Project        string // root relative to the working directory, or "."
	CustomRole     bool
	WritePolicy    string
	AllowFileEdits bool
	// Eligibility is the policy decision the run was made under, kept in the run evidence.
	Eligibility policy.Eligibility
}

// Plan is one run of the seed §9.3 lifecycle.
type Plan struct {
	Info    RunInfo
	Workdir string
	Sandbox string // implementation and fix sandbox (from eligibility); review is always read-only
	Routes  routing.RoutePlan
	Prompt  string
	// OutputSchema, when set, is the JSON schema the implementation's and fix passes' final
	// message must match (a spawning role's delegation answer); the review keeps ReviewSchema.
	OutputSchema string
	// ReviewPrompt enables the review when non-empty.
	ReviewPrompt string
	// FixPrompt enables fix passes when non-nil.
	FixPrompt    FixPromptFunc
	MaxFixPasses int // capped at MaxFixPassesCap
	// Verify enables verification when non-nil.
	Verify        *VerifyCommand
	VerifyOptions VerifyOptions
	// CallTimeout bounds every Codex call (timeout-minutes); 0 means none.
	CallTimeout time.Duration
	// MaxTokens bounds the run's tokens (input plus output; max-tokens); 0 means none. It is
	// checked before every Codex call (usage.go): once reached, the next call is not made and the
	// run ends blocked with a *BudgetError as its reason. A single call can overshoot it.
	MaxTokens int
	// Budget is the run's account (max-tokens and max-cost, held by the proxy in flight too);
	// nil leaves MaxTokens alone.
	Budget *Budget
	// Live, when set, gives each call (named by its step label: "implementation", "review",
	// "fix pass 1"; writing unless read-only) the window that watches it while it runs.
	Live func(label string, writing bool) *Live
	// Goal, when set, runs every writing call as a goal of the implementer's thread with its
	// token budget (a profile agent's execution_mode "goal"); nil: each call is one turn.
	Goal *Goal
	// Thread, when set, is a thread an earlier run kept (EngineAppServer): the implementation
	// goes on in it as its next turn, with Prompt as the turn's input. One that cannot be resumed
	// starts a new thread, and the lines say so (Outcome.ResumeNote).
	Thread *Thread
}

// Hooks let the bot act between steps. Every hook is optional.
type Hooks struct {
	// AfterChange runs after the implementation (pass 0) and after each fix pass (pass n), before
	// verification, whether or not the call succeeded: the bot commits the in-scope changes here,
	// so work done before a failure or timeout stays on the branch. An error ends the run blocked.
	AfterChange func(ctx context.Context, pass int, exe Execution) error
	// AfterVerify sees each verification (pass 0 for the implementation's).
	AfterVerify func(ctx context.Context, pass int, v VerificationResult) error
	// AfterReview sees each review (pass 0 for the implementation's): the bot posts it as a
	// pull-request review. An error ends the run blocked.
	AfterReview func(ctx context.Context, pass int, r ReviewOutcome) error
	// OnLine receives each lifecycle line as it is produced (logs, status comment), redacted.
	OnLine func(line string)
}

// Lifecycle runs plans. Runner is required; the rest is optional.
type Lifecycle struct {
	Runner   Runner
	Evidence *Evidence // nil: no run folder
	Redactor *Redactor // applied to prompts, lines and evidence
	Hooks    Hooks
	Now      func() time.Time // metadata timestamp; nil means time.Now
}

// FixPass is one fix pass.
type FixPass struct {
	Pass         int                 `json:"pass"`
	Execution    Execution           `json:"execution"`
	Verification *VerificationResult `json:"verification,omitempty"`
	Review       *ReviewOutcome      `json:"review,omitempty"`
}

// Outcome is seed §9.3's result plus the reason a blocked run stopped.
type Outcome struct {
	Implementation Execution           `json:"implementation"`
	Verification   *VerificationResult `json:"verification,omitempty"`
	Review         *ReviewOutcome      `json:"review,omitempty"`
	FixPasses      []FixPass           `json:"fixPasses"`
	FinalStatus    string              `json:"finalStatus"`
	Reason         string              `json:"reason,omitempty"` // why blocked, one line
	Blockers       []string            `json:"blockers,omitempty"`
	// Usage sums the tokens of every Codex call the run made (fallbacks and their primaries too).
	Usage Usage `json:"usage"`
	// Stopped is set when max-tokens stopped the run before a call; Reason says the same.
	Stopped *BudgetError `json:"stopped,omitempty"`
	// Refusal is set when the model API refused a call (or never answered it): the run ended
	// at once with FinalStatus "error", and Reason says the same.
	Refusal *APIRefusal `json:"refusal,omitempty"`
	Lines   []string    `json:"-"`
	// Thread is the implementer's thread as its last writing call left it, however the run
	// ended; nil when it could not be kept (or the engine keeps none).
	Thread *Thread `json:"-"`
	// ResumeNote says why Plan.Thread was not resumed ("" when it was, or none was given).
	ResumeNote string `json:"resumeNote,omitempty"`
}

// End says how the run's calls ended, in a word or two: a refusal, a budget, a call's limit, or
// the final status.
func (o Outcome) End() string {
	switch {
	case o.Refusal != nil:
		return "error: " + o.Refusal.Headline()
	case o.Stopped != nil:
		return "stopped: budget"
	case len(o.Limits()) > 0:
		return "blocked: " + string(o.Limits()[0].Resource) + " limit"
	}
	return o.FinalStatus
}

// ThreadTurns counts the turns of the implementer's thread this run made: the implementation's
// and each fix pass's.
func (o Outcome) ThreadTurns() int {
	n := o.Implementation.Result.Events.Turns
	for _, p := range o.FixPasses {
		n += p.Execution.Result.Events.Turns
	}
	return n
}

// Leftovers counts the processes every Codex call and verification of the run left running
// (all killed): a non-zero count means the agent tried to outlive its calls.
func (o Outcome) Leftovers() int {
	n := o.Implementation.Leftovers()
	add := func(v *VerificationResult, r *ReviewOutcome) {
		if v != nil {
			n += v.Leftovers
		}
		if r != nil {
			n += r.Execution.Leftovers()
		}
	}
	add(o.Verification, o.Review)
	for _, p := range o.FixPasses {
		n += p.Execution.Leftovers()
		add(p.Verification, p.Review)
	}
	return n
}

// OutputCut counts what every Codex call of the run printed beyond what the evidence keeps
// (output.go): a non-zero count means a call flooded its output.
func (o Outcome) OutputCut() OutputCut {
	var c OutputCut
	add := func(e Execution) {
		for _, r := range []*Result{&e.Result, e.Primary} {
			if r != nil {
				c = c.add(r.OutputCut)
			}
		}
	}
	add(o.Implementation)
	if o.Review != nil {
		add(o.Review.Execution)
	}
	for _, p := range o.FixPasses {
		add(p.Execution)
		if p.Review != nil {
			add(p.Review.Execution)
		}
	}
	return c
}

// Limits lists the per-call limits (memory, processes) the run's Codex calls and verifications
// reached, each resource once, in the order first reached.
func (o Outcome) Limits() []jail.LimitHit {
	var hits []jail.LimitHit
	add := func(h *jail.LimitHit) {
		if h == nil {
			return
		}
		for _, seen := range hits {
			if seen.Resource == h.Resource {
				return
			}
		}
		hits = append(hits, *h)
	}
	step := func(e Execution, v *VerificationResult, r *ReviewOutcome) {
		if e.Primary != nil {
			add(e.Primary.Limit)
		}
		add(e.Result.Limit)
		if v != nil {
			add(v.Limit)
		}
		if r != nil {
			add(r.Execution.Result.Limit)
		}
	}
	step(o.Implementation, o.Verification, o.Review)
	for _, p := range o.FixPasses {
		step(p.Execution, p.Verification, p.Review)
	}
	return hits
}

// Output is the lifecycle text: lines joined by a blank line (seed §9.3).
func (o Outcome) Output() string { return strings.Join(o.Lines, "\n\n") }

// attempt is one implementation or fix pass with its checks.
type attempt struct {
	called bool // the Codex call was made (max-tokens can stop an attempt before it)
	exe    Execution
	verify *VerificationResult
	review *ReviewOutcome
	stop   *BudgetError // max-tokens stopped the attempt before one of its calls
	// refused: the model API refused one of the attempt's calls. Every later call would be
	// refused the same way, so nothing follows it: no verification, review or fix pass.
	refused *APIRefusal
}

// timedOut reports a Codex call of this attempt that ran out of time.
func (a attempt) timedOut() *Result {
	if a.exe.Result.TimedOut {
		return &a.exe.Result
	}
	if a.review != nil && a.review.Execution.Result.TimedOut {
		return &a.review.Execution.Result
	}
	return nil
}

func (a attempt) blocked() bool {
	return a.exe.Failed() || (a.verify != nil && a.verify.Failed()) || (a.review != nil && a.review.Failed())
}

// Run executes the plan: implement, verify, review, then fix passes while blocked (seed §9.3).
// The returned error is set only when the run could not be carried out as planned (an invalid
// plan, a canceled context, a failing hook, unwritable evidence); the Outcome is filled as far as
// the run got and is "blocked" in that case.
func (l *Lifecycle) Run(ctx context.Context, p Plan) (Outcome, error) {
	if l.Runner == nil {
		return Outcome{FinalStatus: StatusBlocked, Reason: "no Codex runner"}, errors.New("lifecycle: no Codex runner")
	}
	if p.MaxFixPasses < 0 {
		return Outcome{FinalStatus: StatusBlocked, Reason: "max fix passes must be >= 0"}, errors.New("lifecycle: max fix passes must be >= 0")
	}
	if l.Evidence == nil {
		// The CLI runner needs a folder per call; without a run folder use a scratch one.
		tmp, err := os.MkdirTemp("", "codex-studio-run-")
		if err != nil {
			return Outcome{FinalStatus: StatusBlocked, Reason: "no scratch folder"}, fmt.Errorf("lifecycle: %w", err)
		}
		defer os.RemoveAll(tmp)
		scratch := *l
		scratch.Evidence = &Evidence{Dir: tmp, Redactor: l.Redactor}
		l = &scratch
	}
	r := &run{l: l, p: p, out: Outcome{FixPasses: []FixPass{}}, meter: NewMeter(l.Runner, max(p.MaxTokens, 0)).WithBudget(p.Budget), thread: p.Thread}
	err := r.execute(ctx)
	r.out.Usage = r.meter.Used()
	r.out.Thread = r.thread
	if err != nil {
		r.out.FinalStatus = StatusBlocked
		if r.out.Reason == "" {
			r.out.Reason = err.Error()
		}
		r.line("blocked: " + r.out.Reason)
		r.line("final status: " + StatusBlocked)
	}
	if werr := l.Evidence.WriteJSON("result.json", r.out); werr != nil && err == nil {
		err = werr
	}
	return r.out, err
}

type run struct {
	l     *Lifecycle
	p     Plan
	out   Outcome
	meter *Meter // every Codex call goes through it: it counts usage and enforces MaxTokens
	// thread is the implementer's conversation (EngineAppServer): each fix pass is a new turn of
	// it, so the agent keeps what it learned. A review never loads it.
	thread *Thread
}

func (r *run) line(s string) { r.lines(s) }

// lines adds a step's lines to the outcome and the log, and rewrites output.txt once for all of
// them (not once per line: each rewrite is the whole file).
func (r *run) lines(ss ...string) {
	if len(ss) == 0 {
		return
	}
	for _, s := range ss {
		s = r.l.Redactor.Redact(s)
		r.out.Lines = append(r.out.Lines, s)
		if r.l.Hooks.OnLine != nil {
			r.l.Hooks.OnLine(s)
		}
	}
	_ = r.l.Evidence.WriteOutput(r.out.Lines) // best effort: the lines also go to OnLine
}

// execute is the lifecycle itself: the implementation attempt, then fix passes while the review
// or the verification blocks and no stop, refusal, timeout or budget ends it, each pass a turn of
// the implementer's thread. It stays one function because each pass's decision reads the one
// before it (before/last), and split across helpers that pair would travel everywhere.
func (r *run) execute(ctx context.Context) error {
	p := r.p
	maxPasses := min(p.MaxFixPasses, MaxFixPassesCap)
	if err := r.writeStart(); err != nil {
		return err
	}

	first, err := r.attempt(ctx, 0, "implementation", "implement", p.Routes.Implementation, r.l.Redactor.Redact(p.Prompt))
	r.out.Implementation, r.out.Verification, r.out.Review = first.exe, first.verify, first.review
	if err != nil {
		return err
	}
	last, before := first, attempt{} // before: the attempt ahead of last, whose blockers a cut pass leaves standing
	blocked := first.blocked()
	for pass := 1; blocked && last.stop == nil && last.refused == nil && p.FixPrompt != nil && pass <= maxPasses && last.timedOut() == nil; pass++ {
		if stop := r.checkBudget(fmt.Sprintf("fix pass %d", pass)); stop != nil {
			last.stop = stop
			break
		}
		blockers := r.blockers(last)
		text, perr := p.FixPrompt(ctx, FixInput{Pass: pass, Blockers: blockers, OutputSoFar: r.out.Output()})
		if perr != nil {
			return fmt.Errorf("render fix prompt for pass %d: %w", pass, perr)
		}
		prompt := r.l.Redactor.Redact(text) + "\n\n# Previous run summary\n\n" + r.out.Output() + "\n"
		a, err := r.attempt(ctx, pass, fmt.Sprintf("fix pass %d", pass), "fix", p.Routes.Fix, prompt)
		r.out.FixPasses = append(r.out.FixPasses, FixPass{Pass: pass, Execution: a.exe, Verification: a.verify, Review: a.review})
		if err != nil {
			return err
		}
		before, last, blocked = last, a, a.blocked() // only the latest pass counts
	}

	switch {
	case last.refused != nil:
		// Work an earlier call of the run wrote was already handed to AfterChange.
		r.out.FinalStatus, r.out.Refusal, r.out.Reason = StatusError, last.refused, last.refused.Error()
		r.out.Blockers = []string{r.out.Reason}
		r.line("error: " + r.out.Reason)
	case last.stop != nil:
		// max-tokens: the work so far was already handed to AfterChange; the run did not finish.
		r.out.FinalStatus, r.out.Stopped, r.out.Reason = StatusBlocked, last.stop, last.stop.Error()
		// The blockers that still stand, without the call max-tokens refused (a fallback).
		standing := last
		if stop := budgetStop(standing.exe, ""); stop != nil {
			standing.exe = Execution{}
			if stop.During != "" && before.called {
				// The proxy cut this pass in flight: it judged nothing, so what stood before it
				// still stands.
				standing = before
			}
		}
		if standing.review != nil && budgetStop(standing.review.Execution, "") != nil {
			standing.review = nil
		}
		r.out.Blockers = append([]string{r.out.Reason}, r.blockers(standing)...)
		if len(r.out.Blockers) > MaxFixBlockers {
			r.out.Blockers = r.out.Blockers[:MaxFixBlockers]
		}
		r.line("blocked: " + r.out.Reason)
	case !blocked:
		r.out.FinalStatus = StatusDone
	case last.timedOut() != nil:
		// A timed-out call spent the whole budget; another pass would likely hang the same way.
		r.out.FinalStatus, r.out.Reason = StatusBlocked, last.timedOut().Err.Error()
		r.out.Blockers = r.blockers(last)
		r.line("blocked: " + r.out.Reason)
	default:
		r.out.FinalStatus = StatusBlocked
		r.out.Blockers = r.blockers(last)
		if len(r.out.Blockers) > 0 {
			r.out.Reason = r.out.Blockers[0]
		}
		if p.FixPrompt != nil && len(r.out.FixPasses) >= maxPasses {
			r.out.Reason = fmt.Sprintf("reached max fix passes (%d)", maxPasses)
			r.line(fmt.Sprintf("blocked: reached max fix passes (%d)", maxPasses))
		}
	}
	r.line("final status: " + r.out.FinalStatus)
	return nil
}

// attempt runs one Codex step and the checks that follow it.
func (r *run) attempt(ctx context.Context, pass int, label, phase string, route routing.Route, prompt string) (attempt, error) {
	var a attempt
	if a.stop = r.checkBudget(label); a.stop != nil {
		return a, nil
	}
	a.called = true
	a.exe, _ = r.codex(ctx, phase, label, r.p.Sandbox, route, prompt, r.p.OutputSchema, true)
	r.lines(a.exe.Lines(label)...)
	if ctx.Err() != nil {
		return a, fmt.Errorf("%s: %w", label, ctx.Err())
	}
	if h := r.l.Hooks.AfterChange; h != nil {
		if err := h(ctx, pass, a.exe); err != nil {
			return a, fmt.Errorf("after %s: %w", label, err)
		}
	}
	if a.stop = budgetStop(a.exe, label); a.stop != nil {
		return a, nil
	}
	if a.exe.Failed() {
		a.refused = r.refusal(a.exe.Result)
		return a, nil
	}
	if r.p.Verify != nil {
		v, err := r.verify(ctx, pass)
		a.verify = &v
		if err != nil {
			return a, err
		}
		if v.Failed() {
			return a, nil
		}
	}
	if r.p.ReviewPrompt != "" {
		if a.stop = r.checkBudget(passReviewLabel(pass)); a.stop != nil {
			return a, nil
		}
		rev, stop, refused, err := r.review(ctx, pass)
		a.review, a.stop, a.refused = &rev, stop, refused
		if err != nil {
			return a, err
		}
	}
	return a, nil
}

// checkBudget is the max-tokens check before the call named by label ("implementation", "fix
// pass 1", "review"); it logs nothing, the caller ends the run.
func (r *run) checkBudget(label string) *BudgetError {
	if err := r.meter.Check(budgetLabel(label)); err != nil {
		return err.(*BudgetError)
	}
	return nil
}

// budgetStop reports a step whose fallback call max-tokens refused (the Meter answers the call
// with a *BudgetError), naming the fallback.
func budgetStop(exe Execution, label string) *BudgetError {
	var be *BudgetError
	if !errors.As(exe.Result.Err, &be) {
		return nil
	}
	stop := *be
	switch {
	case be.During != "" && label != "":
		stop.During = budgetLabel(label) // the proxy stopped this step's call in flight
	case be.During == "":
		stop.Before = "the fallback call of " + budgetLabel(label)
	}
	return &stop
}

// budgetLabel words a step for "stopped before …": "the implementation", "the review", "fix pass 2".
func budgetLabel(label string) string {
	if strings.HasPrefix(label, "fix pass") {
		return label
	}
	return "the " + label
}

func passReviewLabel(pass int) string {
	if pass == 0 {
		return "review"
	}
	return fmt.Sprintf("review of fix pass %d", pass)
}

// codex runs one lifecycle step through RunStep; it returns the step folder relative to the run
// folder. A step onThread (the implementation, a fix pass) goes on with the implementer's thread:
// the first starts it, each later one is a new turn of it; a step whose thread could not be kept
// leaves the next to start afresh, and says so. A review is never on it.
func (r *run) codex(ctx context.Context, phase, label, sandbox string, route routing.Route, prompt, schema string, onThread bool) (Execution, string) {
	name := "output-schema.json"
	if schema == ReviewSchema {
		name = "review-schema.json"
	}
	step := Step{
		Evidence: r.l.Evidence, Runner: r.meter, Label: label, Phase: phase, Prompt: prompt,
		Workdir: r.p.Workdir, Sandbox: sandbox, Timeout: r.p.CallTimeout, Schema: schema, SchemaName: name, Route: route,
		Live: r.live(label, sandbox),
	}
	if onThread {
		step.Thread, step.KeepThread, step.Goal = r.thread, true, r.p.Goal
	}
	exe, dir := RunStep(ctx, step)
	if onThread && exe.Result.ResumeNote != "" {
		r.out.ResumeNote = exe.Result.ResumeNote
		r.line(fmt.Sprintf("%s: the kept thread could not be resumed (%s); a new thread started", label, exe.Result.ResumeNote))
	}
	switch {
	case !onThread:
	case exe.Result.Thread != nil:
		r.thread = exe.Result.Thread
	case exe.Result.ThreadNote != "":
		r.line(fmt.Sprintf("%s: the agent's thread was not kept (%s); the next pass starts a new one", label, exe.Result.ThreadNote))
		r.thread = nil
	}
	return exe, dir
}

func (r *run) live(label, sandbox string) *Live {
	if r.p.Live == nil {
		return nil
	}
	return r.p.Live(label, Request{Sandbox: sandbox}.Writing())
}

func (r *run) verify(ctx context.Context, pass int) (VerificationResult, error) {
	v, err := Verify(ctx, r.p.Workdir, *r.p.Verify, r.p.VerifyOptions)
	if err != nil && v.Command == "" {
		// Not run at all (empty command): report it as a failed verification, not a crash.
		v = VerificationResult{Command: r.p.Verify.Command, Args: r.p.Verify.Args, Cwd: r.p.Workdir, Stderr: err.Error()}
		err = nil
	}
	r.lines(v.Lines()...)
	ev := r.l.Evidence
	dir := rel(ev, ev.StepDir(passName("verification", pass)))
	_ = ev.WriteJSON(filepath.Join(dir, "result.json"), v)
	_ = ev.Write(filepath.Join(dir, "stdout.txt"), []byte(v.Stdout))
	_ = ev.Write(filepath.Join(dir, "stderr.txt"), []byte(v.Stderr))
	if err != nil {
		return v, err
	}
	if h := r.l.Hooks.AfterVerify; h != nil {
		if err := h(ctx, pass, v); err != nil {
			return v, fmt.Errorf("after verification: %w", err)
		}
	}
	return v, nil
}

// review runs one review; a non-nil *BudgetError means max-tokens refused its fallback call, and
// a non-nil *APIRefusal that the model API refused the call: the review, which has no verdict
// then, is not handed to AfterReview.
func (r *run) review(ctx context.Context, pass int) (ReviewOutcome, *BudgetError, *APIRefusal, error) {
	prompt := r.l.Redactor.Redact(r.p.ReviewPrompt) + "\n\n# Implementation and verification output\n\n" + r.out.Output() + "\n"
	exe, dir := r.codex(ctx, "review", passName("review", pass), "read-only", r.p.Routes.Review, prompt, ReviewSchema, false)
	rev := NewReviewOutcome(exe)
	r.lines(rev.Lines()...)
	if stop := budgetStop(exe, passReviewLabel(pass)); stop != nil {
		return rev, stop, nil, nil
	}
	if refused := r.refusal(exe.Result); refused != nil {
		return rev, nil, refused, nil
	}
	if rev.Verdict != nil {
		_ = r.l.Evidence.WriteJSON(filepath.Join(dir, "verdict.json"), rev.Verdict)
	}
	if ctx.Err() != nil {
		return rev, nil, nil, fmt.Errorf("review: %w", ctx.Err())
	}
	if h := r.l.Hooks.AfterReview; h != nil {
		if err := h(ctx, pass, rev); err != nil {
			return rev, nil, nil, fmt.Errorf("after review: %w", err)
		}
	}
	return rev, nil, nil, nil
}

// refusal is Refusal with the API's words redacted: the API quotes part of a key it refuses.
func (r *run) refusal(res Result) *APIRefusal {
	ref := Refusal(res)
	if ref != nil {
		ref.Message = r.l.Redactor.Redact(ref.Message)
	}
	return ref
}

// blockers lists what kept an attempt from passing, for the fix prompt and the status, bounded to
// MaxFixBlockers (the context contract's bound).
func (r *run) blockers(a attempt) []string {
	var out []string
	if a.exe.Failed() {
		res := a.exe.Result
		msg := fmt.Sprintf("Codex call failed (exit=%s)", exitCodeText(res.ExitCode))
		if res.Err != nil {
			msg = "Codex call failed: " + res.Err.Error()
		}
		out = append(out, msg)
	}
	if v := a.verify; v != nil && v.Failed() {
		msg := fmt.Sprintf("verification failed: %s exit=%s", strings.TrimSpace(v.Command+" "+strings.Join(v.Args, " ")), exitText(v.ExitCode))
		if v.TimedOut {
			msg += " (timed out)"
		}
		if err := v.LimitError(); err != nil {
			msg += " (" + err.Error() + ")"
		}
		if tail := lastLines(v.Stderr+"\n"+v.Stdout, 5); tail != "" {
			msg += "\n" + tail
		}
		out = append(out, msg)
	}
	if rv := a.review; rv != nil && rv.Failed() {
		switch {
		case rv.Malformed != "":
			out = append(out, "review blocked: malformed review JSON ("+rv.Malformed+")")
		default:
			for _, b := range rv.Verdict.Blockers {
				out = append(out, b.String())
			}
			if len(rv.Verdict.Blockers) == 0 {
				out = append(out, "review asked for a fix: "+rv.Verdict.Summary)
			}
		}
	}
	if len(out) > MaxFixBlockers {
		out = out[:MaxFixBlockers]
	}
	for i := range out {
		out[i] = r.l.Redactor.Redact(out[i])
	}
	return out
}

func (r *run) writeStart() error {
	ev := r.l.Evidence
	now := time.Now
	if r.l.Now != nil {
		now = r.l.Now
	}
	impl := r.p.Routes.Implementation
	info := r.p.Info
	project := info.Project
	if project == "" {
		project = "."
	}
	meta := Metadata{
		RunID: info.RunID, Timestamp: now().UTC().Format("2006-01-02T15:04:05.000Z"), Product: Product,
		Project: project, Role: info.Role, Task: info.Task, CustomRole: info.CustomRole,
		PromptChars: len([]rune(r.l.Redactor.Redact(r.p.Prompt))), PromptCachePath: filepath.Join(ev.Dir, "prompt.md"),
		SelectedModelTier: impl.Tier, SelectedModel: impl.Primary.Model, ModelReasoningEffort: impl.Primary.Effort,
		FallbackModel: impl.Fallback.Model, FallbackReasoningEffort: impl.Fallback.Effort, ModelSelectionSource: impl.Source,
		Review: r.p.ReviewPrompt != "", Fix: r.p.FixPrompt != nil, MaxFixPasses: min(r.p.MaxFixPasses, MaxFixPassesCap),
		WritePolicy: info.WritePolicy, AllowFileEdits: info.AllowFileEdits, CodexSandbox: r.p.Sandbox, Eligibility: info.Eligibility,
	}
	if err := ev.Write("prompt.md", []byte(r.p.Prompt)); err != nil {
		return err
	}
	return ev.WriteJSON("metadata.json", meta)
}

func passName(step string, pass int) string {
	if pass == 0 {
		return step
	}
	return fmt.Sprintf("%s-%d", step, pass)
}

func rel(ev *Evidence, path string) string {
	r, err := filepath.Rel(ev.Dir, path)
	if err != nil {
		return path
	}
	return r
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
