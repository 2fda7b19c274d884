package bot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The handler tests drive (*Bot).Handle the way cmd/studio's action does, against a whole offline
// world (internal/sandbox): the GitHub emulator serving the repository over loopback, a workspace
// cloned from it, a gitops.Repo on that workspace, and an in-process scripted agent. They assert
// what a user would see on GitHub afterwards: the outcome, comments, labels, check runs, pull
// requests and branches.

const (
	hReviewer = "hubot"         // a second writer: strict-studio forbids self-approval
	hReader   = "reader"        // read permission only
	hOtherBot = "renovate[bot]" // a bot account with write permission
)

// hTask is a fast-prototype task issue's body.
const hTask = "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nfiles: [design/gdd.md]\n```\n"

const hJump = "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"

// hClock is the world's clock, shared by the emulator and the bot so timestamps compare.
type hClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *hClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *hClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// agentCall is one scripted writing (or plan) call of the agent.
type agentCall struct {
	write   map[string]string // workspace path -> content
	message string            // final message; "Done." when empty
	exit    int
	during  func() // runs after the edits, while the call is still going (a cancellation)
	// turnFailed ends the call as the real CLI does when the model API refuses it: exit 1, no
	// answer, the message in an error item and turn.failed.
	turnFailed string
}

// scriptedCodex is the in-process agent: writing calls take calls in order, calls with an output
// schema (reviews, proposals) take answers in order; in each list the last entry repeats, and
// with no answers every review passes.
type scriptedCodex struct {
	calls   []agentCall
	answers []string

	mu   sync.Mutex
	reqs []codex.Request
	n, a int
}

// failAnswer, as an answer, makes the schema call fail (exit 1).
const failAnswer = "\x00fail"

// refuseAnswer, as an answer, makes the schema call fail as refused by the model API with msg.
func refuseAnswer(msg string) string { return refusePrefix + msg }

const refusePrefix = "\x00refuse:"

const passingReview = `{"blockers":[],"warnings":[],"summary":"Looks good.","needsFix":false}`

func (s *scriptedCodex) Run(_ context.Context, req codex.Request) codex.Result {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var call agentCall
	if req.OutputSchema != "" {
		call.message = passingReview
		if len(s.answers) > 0 {
			call.message = s.answers[min(s.a, len(s.answers)-1)]
		}
		if call.message == failAnswer {
			call = agentCall{exit: 1, message: "failed"}
		}
		if msg, ok := strings.CutPrefix(call.message, refusePrefix); ok {
			call = agentCall{turnFailed: msg}
		}
		s.a++
	} else {
		if len(s.calls) > 0 {
			call = s.calls[min(s.n, len(s.calls)-1)]
		}
		s.n++
	}
	s.mu.Unlock()
	if call.message == "" {
		call.message = "Done."
	}
	res := codex.Result{Model: req.Model.Model, ExitCode: call.exit, FinalMessage: call.message}
	res.Events.Usage = codex.Usage{InputTokens: 100, OutputTokens: 10}
	res.Events.TurnCompleted = call.exit == 0
	for path, content := range call.write {
		full := filepath.Join(req.Workdir, filepath.FromSlash(path))
		err := os.MkdirAll(filepath.Dir(full), 0o755)
		if err == nil {
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			res.ExitCode, res.Err = 1, err
		}
	}
	if call.during != nil {
		call.during()
	}
	if call.turnFailed != "" {
		res.ExitCode, res.FinalMessage = 1, ""
		res.Events = codex.EventSummary{Events: 4, Errors: []string{call.turnFailed}, TurnFailed: call.turnFailed}
	}
	return res
}

// requests returns the calls made so far: writing calls and schema calls.
func (s *scriptedCodex) requests() (writes, schema []codex.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		if r.OutputSchema != "" {
			schema = append(schema, r)
		} else {
			writes = append(writes, r)
		}
	}
	return writes, schema
}

// hWorld is one offline world: the emulator, the workspace and the agent the next event uses.
type hWorld struct {
	*sandbox.World
	t     *testing.T
	clk   *hClock
	agent *scriptedCodex
	// runner, when set, is the agent instead of agent (a live one, live_flow_test.go).
	runner codex.Runner
	log    bytes.Buffer
	// logw is the one writer of log for every event, so events that run at once (a live run and
	// a steer's own event) write it in turn.
	logw  *syncWriter
	runs  int
	start map[int][]string // each issue's labels when it was opened, sorted
}

func newHWorld(t *testing.T, files map[string]string) *hWorld {
	t.Helper()
	clk := &hClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	sw, err := sandbox.New(sandbox.Options{Files: files, Dir: t.TempDir(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	w := &hWorld{World: sw, t: t, clk: clk, agent: &scriptedCodex{}, start: map[int][]string{}}
	w.logw = &syncWriter{w: &w.log}
	w.Emu.AddUser(hReviewer)
	w.Emu.AddUser(hReader)
	w.Emu.AddBot(hOtherBot)
	for login, role := range map[string]ghemu.Role{hReviewer: ghemu.RoleWrite, hReader: ghemu.RoleRead, hOtherBot: ghemu.RoleWrite} {
		if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, login, role); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// studioFiles is the default project with studio.json's studioMode and status set.
func studioFiles(mode, status string) map[string]string {
	files := sandbox.DefaultFiles(mode)
	if status != "" {
		files[".codex/studio.json"] = strings.Replace(files[".codex/studio.json"], `"status": "active"`, fmt.Sprintf(`"status": %q`, status), 1)
	}
	return files
}

// script sets the agent of the next events.
func (w *hWorld) script(calls []agentCall, answers ...string) *scriptedCodex {
	w.agent = &scriptedCodex{calls: calls, answers: answers}
	return w.agent
}

func (w *hWorld) issue(title, body string, labels ...string) int {
	w.t.Helper()
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: title, Body: body, Labels: labels})
	if err != nil {
		w.t.Fatal(err)
	}
	w.start[is.Number] = w.labels(is.Number)
	return is.Number
}

// decode turns a payload into the trigger the action would handle; a skipped event fails the test.
func (w *hWorld) decode(event string, payload []byte, err error) Trigger {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
	tr, err := DecodeEvent(event, payload)
	if err != nil {
		w.t.Fatalf("decode %s: %v", event, err)
	}
	return tr
}

// comment posts body as author and returns the issue_comment trigger GitHub would send.
func (w *hWorld) comment(number int, author, body string) Trigger {
	w.t.Helper()
	id, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, number, author, body)
	if err != nil {
		w.t.Fatal(err)
	}
	payload, err := w.Emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, number, id, author)
	return w.decode("issue_comment", payload, err)
}

// labeled returns the issues.labeled trigger for a label the issue already carries.
func (w *hWorld) labeled(number int, label, sender string) Trigger {
	w.t.Helper()
	payload, err := w.Emu.WebhookPayload("issues", "labeled", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: number, Label: label, Sender: sender})
	return w.decode("issues", payload, err)
}

// pullEvent returns a pull_request trigger (opened, synchronize, ...).
func (w *hWorld) pullEvent(action string, number int, sender string) Trigger {
	w.t.Helper()
	payload, err := w.Emu.WebhookPayload("pull_request", action, ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: number, Sender: sender})
	return w.decode("pull_request", payload, err)
}

// review submits a review (APPROVE unless spec says otherwise) and returns its trigger.
func (w *hWorld) review(number int, login string, spec ghemu.ReviewSpec) Trigger {
	w.t.Helper()
	if spec.Event == "" {
		spec.Event = "APPROVE"
	}
	rv, err := w.Emu.SubmitReview(sandbox.Owner, sandbox.Repo, number, login, spec)
	if err != nil {
		w.t.Fatal(err)
	}
	payload, err := w.Emu.WebhookPayload("pull_request_review", "submitted", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: number, ReviewID: rv.ID, Sender: login})
	return w.decode("pull_request_review", payload, err)
}

// bot builds one event's bot as cmd/studio's action does: a fresh client and workspace repo,
// the world's agent and clock, and a run id of its own.
func (w *hWorld) bot(tune ...func(*Settings)) *Bot {
	w.t.Helper()
	w.runs++
	gh, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo, hub.WithLogin(sandbox.BotLogin))
	if err != nil {
		w.t.Fatal(err)
	}
	runID := fmt.Sprint(4000 + w.runs)
	s := Settings{
		BotLogin: sandbox.BotLogin, RunID: runID, RunURL: w.Emu.URL() + "/acme/hop/actions/runs/" + runID,
		WorkDir: w.Workspace, RunsDir: filepath.Join(w.RunnerTemp, "studio-runs"), GuidanceDir: filepath.Join(w.RunnerTemp, "studio-guidance"),
		CodexTimeout: time.Minute, RequiredApprovals: 1,
	}
	for _, f := range tune {
		f(&s)
	}
	return New(Deps{
		GitHub: gh,
		Workspace: &gitops.Repo{
			Dir: w.Workspace, Token: w.Token, RemoteURL: w.Emu.URL() + "/" + sandbox.Owner + "/" + sandbox.Repo + ".git",
			StateDir: filepath.Join(w.RunnerTemp, "studio-git"),
		},
		Codex: w.codex(), Redactor: codex.NewRedactor(gitops.SecretForms(w.Token)...),
		Now: w.clk.Now, Log: w.logw,
	}, s)
}

func (w *hWorld) codex() codex.Runner {
	if w.runner != nil {
		return w.runner
	}
	return w.agent
}

// handle runs one event and returns its outcome and the REST requests it made.
func (w *hWorld) handle(tr Trigger, tune ...func(*Settings)) (Outcome, []string) {
	w.t.Helper()
	out, api, err := w.handleCtx(context.Background(), tr, tune...)
	if err != nil {
		w.t.Fatalf("Handle(%s on #%d): %v\nlog:\n%s", tr.Kind, tr.Issue, err, w.log.String())
	}
	return out, api
}

// handleCtx runs one event with ctx and returns what Handle returned.
func (w *hWorld) handleCtx(ctx context.Context, tr Trigger, tune ...func(*Settings)) (Outcome, []string, error) {
	w.t.Helper()
	before := len(w.Emu.Requests())
	out, err := w.bot(tune...).Handle(ctx, tr)
	var api []string
	for _, r := range w.Emu.Requests()[before:] {
		if !r.Git {
			api = append(api, r.Method+" "+r.Path)
		}
	}
	return out, api, err
}

// mustHandle is handle with the outcome's status checked.
func (w *hWorld) mustHandle(tr Trigger, status string, tune ...func(*Settings)) (Outcome, []string) {
	w.t.Helper()
	out, api := w.handle(tr, tune...)
	if out.Status != status {
		w.t.Fatalf("status = %q, want %q (skip %q)\nsummary:\n%s\nlog:\n%s", out.Status, status, out.Skip, out.Summary, w.log.String())
	}
	return out, api
}

func (w *hWorld) botComments(number int) []ghemu.Comment {
	var out []ghemu.Comment
	for _, c := range w.Emu.Comments(sandbox.Owner, sandbox.Repo, number) {
		if c.Author == sandbox.BotLogin {
			out = append(out, c)
		}
	}
	return out
}

// status is the issue's status comment, "" when there is none.
func (w *hWorld) status(number int) string {
	w.t.Helper()
	var found []string
	for _, c := range w.botComments(number) {
		if strings.HasPrefix(c.Body, status.StatusMarker(number)) {
			found = append(found, c.Body)
		}
	}
	if len(found) > 1 {
		w.t.Fatalf("#%d has %d status comments, want one", number, len(found))
	}
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// replies are the bot's comments on number other than the status comment.
func (w *hWorld) replies(number int) []string {
	var out []string
	for _, c := range w.botComments(number) {
		if !strings.HasPrefix(c.Body, status.StatusMarker(number)) {
			out = append(out, c.Body)
		}
	}
	return out
}

func (w *hWorld) labels(number int) []string {
	ls := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, number)
	slices.Sort(ls)
	return ls
}

func (w *hWorld) reactions(commentID int64) []string {
	var out []string
	for _, r := range w.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, commentID) {
		out = append(out, r.User+":"+r.Content)
	}
	return out
}

// checks are the check runs named name on sha.
func (w *hWorld) checks(name, sha string) []ghemu.CheckRun {
	var out []ghemu.CheckRun
	for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.Name == name && cr.HeadSHA == sha {
			out = append(out, cr)
		}
	}
	return out
}

// branch is the remote branch's head, "" when it does not exist.
func (w *hWorld) branch(name string) string {
	w.t.Helper()
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/heads/")
	if err != nil {
		w.t.Fatal(err)
	}
	return refs["refs/heads/"+name]
}

// file reads path at ref on the remote.
func (w *hWorld) file(ref, path string) string {
	w.t.Helper()
	data, err := w.Emu.ReadFile(sandbox.Owner, sandbox.Repo, ref, path)
	if err != nil {
		w.t.Fatalf("read %s at %s: %v", path, ref, err)
	}
	return string(data)
}

func (w *hWorld) pulls() []ghemu.Pull { return w.Emu.Pulls(sandbox.Owner, sandbox.Repo) }

func (w *hWorld) issueBody(number int) string {
	w.t.Helper()
	is, err := w.Emu.Issue(sandbox.Owner, sandbox.Repo, number)
	if err != nil {
		w.t.Fatal(err)
	}
	return is.Body
}

// locks are the lock refs left on the remote (every handled event must release its own).
func (w *hWorld) locks() map[string]string {
	w.t.Helper()
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/studio/locks/")
	if err != nil {
		w.t.Fatal(err)
	}
	return refs
}

func hasAll(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

// A run whose Codex calls spent anything appends its ledger entry (spend.go): the month's first
// run reads the ref, makes the commit and creates the ref; a later one also reads the tip's
// commit and advances the ref instead.
const (
	ledgerAppend      = 3
	ledgerAppendAgain = 4
)

// within fails the test when an event made more REST requests than its budget (issue #10).
func within(t *testing.T, what string, api []string, budget int) {
	t.Helper()
	if len(api) > budget {
		t.Errorf("%s made %d REST requests, budget %d:\n%s", what, len(api), budget, strings.Join(api, "\n"))
	}
}
