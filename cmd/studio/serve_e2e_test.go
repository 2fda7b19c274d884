package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// `studio serve` end to end: a running server (the cobra command, on loopback) against the
// emulator, sent signed deliveries built from the emulator's webhook payloads over real HTTP.

const serveSecret = "whsec-serve-test-0123456789"

// serveWorld is a world with the App installed and `studio serve` running as the App.
type serveWorld struct {
	*world
	app    map[string]string // the action inputs that make a dispatched run act as the App
	inst   int64
	url    string
	stderr *lockedBuffer
	exit   chan int

	mu       sync.Mutex
	outcomes map[string]chan string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newServeWorld is a studio world in mode whose default branch holds the studio workflow unless
// noWorkflow, with a reader, the App installed, and the server started on ctx.
func newServeWorld(t *testing.T, ctx context.Context, mode string, noWorkflow bool, transport http.RoundTripper, extra ...string) *serveWorld {
	t.Helper()
	// The emulator on the real clock: the server signs its App JWTs with it.
	sw, err := sandbox.New(sandbox.Options{Files: sandbox.DefaultFiles(mode), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	w := worldOf(t, sw)
	w.Emu.AddUser(reviewer)
	if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, reviewer, ghemu.RoleWrite); err != nil {
		t.Fatal(err)
	}
	if !noWorkflow {
		if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "main", ghemu.CommitSpec{
			Message: "Add the studio workflow", Files: map[string]string{".github/workflows/studio.yml": string(servedWorkflow(t))},
		}); err != nil {
			t.Fatal(err)
		}
	}
	w.Emu.AddUser("reader")
	if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, "reader", ghemu.RoleRead); err != nil {
		t.Fatal(err)
	}
	s := &serveWorld{world: w, app: w.withApp(""), stderr: &lockedBuffer{}, exit: make(chan int, 1), outcomes: map[string]chan string{}}
	inst, err := w.Emu.InstallApp(testAppID, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	s.inst = inst
	s.start(ctx, transport, extra...)
	return s
}

// replica is a second `studio serve` of the same App against the same world (a second replica
// behind one load balancer): its own address, log and outcomes.
func (s *serveWorld) replica(ctx context.Context) *serveWorld {
	s.t.Helper()
	r := &serveWorld{world: s.world, app: s.app, inst: s.inst, stderr: &lockedBuffer{}, exit: make(chan int, 1), outcomes: map[string]chan string{}}
	r.start(ctx, nil)
	return r
}

// start runs the server on ctx and waits until it serves.
func (s *serveWorld) start(ctx context.Context, transport http.RoundTripper, extra ...string) {
	t, w := s.t, s.world
	t.Helper()
	vars := map[string]string{
		"STUDIO_APP_ID":          fmt.Sprint(testAppID),
		"STUDIO_APP_PRIVATE_KEY": s.app["INPUT_APP-PRIVATE-KEY"],
		"STUDIO_WEBHOOK_SECRET":  serveSecret,
		"GITHUB_API_URL":         strings.TrimSuffix(w.Emu.APIURL(), "/"),
		"GITHUB_SERVER_URL":      w.Emu.URL(),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		vars[extra[i]] = extra[i+1]
	}
	ready := make(chan string, 1)
	hooks := &serveHooks{
		transport: transport,
		ready:     func(addr string) { ready <- addr },
		handled:   func(delivery, outcome string) { s.outcome(delivery) <- outcome },
	}
	e := env{getenv: func(k string) string { return vars[k] }, stdout: io.Discard, stderr: s.stderr}
	root := &cobra.Command{Use: "studio", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(newServeCmd(e, hooks))
	go func() { s.exit <- execute(ctx, root, []string{"serve", "--listen", "127.0.0.1:0"}, s.stderr) }()
	select {
	case addr := <-ready:
		s.url = "http://" + addr
	case code := <-s.exit:
		t.Fatalf("studio serve exited %d before serving:\n%s", code, s.stderr)
	case <-time.After(time.Minute):
		t.Fatalf("studio serve did not start:\n%s", s.stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.stderr)
		}
	})
	// Nothing the server logged holds a secret (the key, the webhook secret, a minted token).
	t.Cleanup(func() {
		log := s.stderr.String()
		for _, sec := range append([]string{serveSecret}, w.Emu.InstallationTokens()...) {
			if strings.Contains(log, sec) {
				t.Errorf("the server's log holds a secret")
			}
		}
		for _, sec := range w.extraSecrets {
			if strings.Contains(log, sec) {
				t.Errorf("the server's log holds a line of the App's private key")
			}
		}
	})
}

func (s *serveWorld) outcome(delivery string) chan string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.outcomes[delivery]
	if !ok {
		c = make(chan string, 4)
		s.outcomes[delivery] = c
	}
	return c
}

// await returns the outcome of an accepted delivery once the server handled it.
func (s *serveWorld) await(delivery string) string {
	s.t.Helper()
	select {
	case o := <-s.outcome(delivery):
		return o
	case <-time.After(2 * time.Minute):
		s.t.Fatalf("delivery %s was not handled", delivery)
		return ""
	}
}

func newDeliveryID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// installed adds the installation GitHub puts in every App delivery.
func (s *serveWorld) installed(payload []byte) []byte {
	s.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		s.t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": s.inst, "node_id": "MDIz"}
	out, err := json.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// post sends one delivery with the given signature header ("" sends none).
func (s *serveWorld) post(event, delivery string, body []byte, signature string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/webhook", bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// deliver sends a correctly signed delivery and, when the server accepted it, waits for it.
func (s *serveWorld) deliver(event string, payload []byte) (delivery string, code int, outcome string) {
	s.t.Helper()
	delivery = newDeliveryID()
	body := s.installed(payload)
	code, msg := s.post(event, delivery, body, sign(serveSecret, body))
	if code == http.StatusAccepted {
		return delivery, code, s.await(delivery)
	}
	return delivery, code, msg
}

func (s *serveWorld) get(path string) (int, string) {
	s.t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *serveWorld) statusComments(issue int) []ghemu.Comment {
	var out []ghemu.Comment
	for _, c := range s.Emu.Comments(sandbox.Owner, sandbox.Repo, issue) {
		if c.Author == testAppBot && strings.Contains(c.Body, fmt.Sprintf("<!-- studio:status issue=%d -->", issue)) {
			out = append(out, c)
		}
	}
	return out
}

// A writer's `/studio run` on a task issue: the server reacts, dispatches exactly one run of the
// studio workflow carrying the command, and says on the status comment that the run is queued,
// with its link. The dispatched run (the action on its workflow_dispatch event, as the App)
// continues that same status comment and never reacts again. A writer's approval of the pull
// request it opened then recomputes studio/gate on the server, with no dispatch.
func TestServeDispatchesAWritersCommandAndRecomputesTheGateOnApproval(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	n := s.issue("Make the jump snappier", taskBody)
	commentID, payload := s.comment(n, sandbox.Writer, "/studio run")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "queued" {
		t.Fatalf("delivery: %d %q", code, outcome)
	}

	reactions := s.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, commentID)
	if len(reactions) != 1 || reactions[0].Content != "eyes" || reactions[0].User != testAppBot {
		t.Fatalf("reactions = %+v, want one eyes by %s", reactions, testAppBot)
	}
	dispatches := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(dispatches) != 1 {
		t.Fatalf("dispatches = %+v, want 1", dispatches)
	}
	d := dispatches[0]
	sc := s.statusComments(n)
	if len(sc) != 1 {
		t.Fatalf("status comments = %+v", sc)
	}
	want := map[string]any{"task": strconv.Itoa(n), "issue": strconv.Itoa(n), "command": "/studio run", "actor": sandbox.Writer,
		"comment-id": strconv.FormatInt(commentID, 10), "status-comment": strconv.FormatInt(sc[0].ID, 10)}
	for k, v := range want {
		if d.Inputs[k] != v {
			t.Errorf("dispatch input %s = %v, want %v (all: %v)", k, d.Inputs[k], v, d.Inputs)
		}
	}
	if d.Workflow != "studio.yml" || d.Ref != "main" || d.User != testAppBot || d.RunID == 0 {
		t.Errorf("dispatch = %+v", d)
	}
	runLink := fmt.Sprintf("%s/%s/%s/actions/runs/%d", s.Emu.URL(), sandbox.Owner, sandbox.Repo, d.RunID)
	if !strings.Contains(sc[0].Body, "Queued") || !strings.Contains(sc[0].Body, runLink) {
		t.Errorf("the status comment does not say queued with the run's link %s:\n%s", runLink, sc[0].Body)
	}

	// The dispatched run, on its runner.
	s.script(fakecodex.Call{
		Edits: []fakecodex.Edit{
			{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"},
			{Write: "tests/test_jump.gd", Content: "extends Node\n# jump test\n"},
		},
		FinalMessage: "Raised the jump velocity and added a test.",
	})
	dispatchPayload, err := s.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, d.RunID)
	if err != nil {
		t.Fatal(err)
	}
	res := s.run("workflow_dispatch", dispatchPayload, s.app)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("dispatched run: exit %d status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	after := s.statusComments(n)
	if len(after) != 1 || after[0].ID != sc[0].ID || !strings.Contains(after[0].Body, "**done**") {
		t.Errorf("the dispatched run did not continue the one status comment: %+v", after)
	}
	// GitHub answers a repeated reaction with the existing one: count the requests instead.
	reacted := 0
	for _, r := range s.Emu.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, fmt.Sprintf("/issues/comments/%d/reactions", commentID)) {
			reacted++
		}
	}
	if reacted != 1 {
		t.Errorf("the comment was reacted to %d times, want once (by the server)", reacted)
	}
	pulls := s.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 1 {
		t.Fatalf("pulls = %+v", pulls)
	}
	pr := pulls[0]
	before := s.gate(pr.HeadSHA)
	if before.Conclusion == "success" {
		t.Fatalf("the gate passes before any approval: %+v", before)
	}

	_, review := s.approve(pr.Number, reviewer, ghemu.ReviewSpec{})
	if _, code, outcome := s.deliver("pull_request_review", review); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("review delivery: %d %q", code, outcome)
	}
	if g := s.gate(pr.HeadSHA); g.Conclusion != "success" {
		t.Errorf("the gate after the approval = %+v, want success", g)
	}
	if got := len(s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)); got != 1 {
		t.Errorf("%d dispatches after the approval, want still 1", got)
	}
	_, metrics := s.get("/metrics")
	for _, line := range []string{
		`studio_deliveries_total{event="issue_comment",outcome="queued"} 1`,
		`studio_deliveries_total{event="pull_request_review",outcome="done"} 1`,
		`studio_dispatches_total{code="200"} 1`,
		"studio_ack_seconds_count 1",
		"studio_github_rate_limit_remaining ",
	} {
		if !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// A reader's command is refused by the server itself, with the one reply the Action gives: no
// reaction, no status comment, no dispatch.
func TestServeRefusesAReadersCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	n := s.issue("Make the jump snappier", taskBody)
	commentID, payload := s.comment(n, "reader", "/studio run")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "refused" {
		t.Fatalf("delivery: %d %q", code, outcome)
	}
	if r := s.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, commentID); len(r) != 0 {
		t.Errorf("reactions = %+v, want none", r)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Errorf("dispatches = %+v, want none", d)
	}
	var replies []string
	for _, c := range s.Emu.Comments(sandbox.Owner, sandbox.Repo, n) {
		if c.Author == testAppBot {
			replies = append(replies, c.Body)
		}
	}
	if len(replies) != 1 || !strings.Contains(replies[0], "@reader") || !strings.Contains(replies[0], "read") {
		t.Errorf("replies = %q, want one refusal naming @reader and its permission", replies)
	}
}

// A delivery with a wrong or no signature is answered 401 and changes nothing (not one GitHub
// request); one signed with the previous secret, during a rotation, is taken; `/healthz` answers,
// and an event the studio does not handle is acknowledged with a 2xx.
func TestServeRejectsUnsignedDeliveries(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil, "STUDIO_WEBHOOK_SECRET_PREVIOUS", "whsec-being-rotated-out")
	n := s.issue("Make the jump snappier", taskBody)
	commentID, payload := s.comment(n, sandbox.Writer, "/studio run")
	body := s.installed(payload)
	requestsBefore := len(s.Emu.Requests())
	for name, sig := range map[string]string{
		"wrong secret":   sign("not-the-secret", body),
		"missing":        "",
		"sha1 only":      "sha1=" + strings.Repeat("0", 40),
		"garbage":        "sha256=zz",
		"other body's":   sign(serveSecret, append(body, ' ')),
		"previous empty": sign("", body),
	} {
		if code, _ := s.post("issue_comment", newDeliveryID(), body, sig); code != http.StatusUnauthorized {
			t.Errorf("%s signature: %d, want 401", name, code)
		}
	}
	if r := s.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, commentID); len(r) != 0 {
		t.Errorf("reactions = %+v", r)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Errorf("dispatches = %+v", d)
	}
	if got := len(s.Emu.Requests()); got != requestsBefore {
		t.Errorf("the rejected deliveries made %d GitHub requests", got-requestsBefore)
	}
	if code, body := s.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %q", code, body)
	}
	// A body over GitHub's 25 MB cap is refused before it is verified or read further.
	huge := bytes.Repeat([]byte(" "), defaultMaxBody+1)
	if code, _ := s.post("issue_comment", newDeliveryID(), huge, sign(serveSecret, huge)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the bound: %d, want 413", code)
	}
	// While the secret is rotated, a delivery signed with the previous one is taken.
	if code, msg := s.post("issue_comment", newDeliveryID(), body, sign("whsec-being-rotated-out", body)); code != http.StatusAccepted {
		t.Errorf("signed with the previous secret: %d %q, want 202", code, msg)
	}
	star := []byte(`{"action":"created","repository":{"name":"hop","owner":{"login":"acme"}}}`)
	if code, _ := s.post("star", newDeliveryID(), star, sign(serveSecret, star)); code/100 != 2 {
		t.Errorf("an unhandled event: %d, want 2xx", code)
	}
	_, metrics := s.get("/metrics")
	if !strings.Contains(metrics, `studio_deliveries_total{event="issue_comment",outcome="bad_signature"} 6`) {
		t.Errorf("/metrics does not count the 6 rejected deliveries:\n%s", metrics)
	}
}

// A delivery redelivered (from the App's settings or its API) keeps its X-GitHub-Delivery: it is answered as done
// and changes nothing, and the same comment under a new delivery id (a server restarted since,
// which forgot the ids it saw) is found handled on the status comment: one reaction, one dispatch.
func TestServeTreatsARedeliveryAsDone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	n := s.issue("Make the jump snappier", taskBody)
	commentID, payload := s.comment(n, sandbox.Writer, "/studio run")
	delivery, code, outcome := s.deliver("issue_comment", payload)
	if code != http.StatusAccepted || outcome != "queued" {
		t.Fatalf("delivery: %d %q", code, outcome)
	}
	body := s.installed(payload)
	if code, msg := s.post("issue_comment", delivery, body, sign(serveSecret, body)); code != http.StatusOK || !strings.Contains(msg, "already") {
		t.Errorf("re-delivery: %d %q, want 200 already handled", code, msg)
	}
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "skipped" {
		t.Errorf("the same comment under a new delivery id: %d %q, want skipped", code, outcome)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 1 {
		t.Errorf("dispatches = %d, want 1", len(d))
	}
	if r := s.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, commentID); len(r) != 1 {
		t.Errorf("reactions = %+v, want 1", r)
	}
}

// A repository without the studio workflow gets a reply that says how to add it; nothing runs.
func TestServeSaysHowToAddAMissingWorkflow(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", true, nil)
	n := s.issue("Make the jump snappier", taskBody)
	_, payload := s.comment(n, sandbox.Writer, "/studio run")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "refused" {
		t.Fatalf("delivery: %d %q", code, outcome)
	}
	sc := s.statusComments(n)
	if len(sc) != 1 || !strings.Contains(sc[0].Body, "studio init") || !strings.Contains(sc[0].Body, ".github/workflows/studio.yml") {
		t.Errorf("status comments = %+v, want one saying to add .github/workflows/studio.yml with studio init", sc)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Errorf("dispatches = %+v", d)
	}
}

// slowTransport delays every GitHub request, so deliveries are still in flight when the test
// signals the server.
type slowTransport struct{ d time.Duration }

func (s slowTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(s.d)
	return http.DefaultTransport.RoundTrip(r)
}

// SIGTERM while deliveries are in flight: the server stops accepting (healthz and new deliveries
// say so), finishes every delivery it accepted, and exits 0. Not parallel: the signal goes to the
// whole test process.
func TestServeFinishesDeliveriesInFlightOnSIGTERM(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s := newServeWorld(t, ctx, "fast-prototype", false, slowTransport{d: 40 * time.Millisecond})
	const k = 4
	var deliveries []string
	var comments []int64
	for i := 0; i < k; i++ {
		n := s.issue(fmt.Sprintf("Task %d", i), taskBody)
		id, payload := s.comment(n, sandbox.Writer, "/studio run")
		body := s.installed(payload)
		delivery := newDeliveryID()
		if code, msg := s.post("issue_comment", delivery, body, sign(serveSecret, body)); code != http.StatusAccepted {
			t.Fatalf("delivery %d: %d %q", i, code, msg)
		}
		deliveries, comments = append(deliveries, delivery), append(comments, id)
	}
	if got := len(s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)); got == k {
		t.Fatalf("every delivery ended before the signal; nothing was in flight")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-s.exit:
		if code != exitOK {
			t.Fatalf("studio serve exited %d after SIGTERM:\n%s", code, s.stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("studio serve did not exit after SIGTERM")
	}
	for i, delivery := range deliveries {
		if o := s.await(delivery); o != "queued" {
			t.Errorf("delivery %d: %q, want queued", i, o)
		}
		if r := s.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, comments[i]); len(r) != 1 {
			t.Errorf("delivery %d: reactions %+v", i, r)
		}
	}
	if got := len(s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)); got != k {
		t.Errorf("%d dispatches, want %d: every accepted delivery finishes", got, k)
	}
	if _, err := http.Get(s.url + "/healthz"); err == nil {
		t.Error("the server still accepts connections after it exited")
	}
	if !strings.Contains(s.stderr.String(), `"msg":"stopped"`) {
		t.Errorf("no stop line in the log:\n%s", s.stderr)
	}
}

// gatedTransport holds every GitHub request until the test opens it.
type gatedTransport struct{ open chan struct{} }

func (g gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(r.URL.Path, "/api/v3/app") { // the App's own setup goes through
		<-g.open
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Bounded concurrency: with every slot taken, a delivery is answered 503 and not remembered, so
// its redelivery (from the App's settings or its API) is taken once a slot is free.
func TestServeAnswers503WhenEverySlotIsTaken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := gatedTransport{open: make(chan struct{})}
	s := newServeWorld(t, ctx, "fast-prototype", false, gate, "STUDIO_SERVE_MAX_IN_FLIGHT", "1")
	var bodies [][]byte
	for i := 0; i < 2; i++ {
		n := s.issue(fmt.Sprintf("Task %d", i), taskBody)
		_, payload := s.comment(n, sandbox.Writer, "/studio run")
		bodies = append(bodies, s.installed(payload))
	}
	first, second := newDeliveryID(), newDeliveryID()
	if code, msg := s.post("issue_comment", first, bodies[0], sign(serveSecret, bodies[0])); code != http.StatusAccepted {
		t.Fatalf("first: %d %q", code, msg)
	}
	if code, msg := s.post("issue_comment", second, bodies[1], sign(serveSecret, bodies[1])); code != http.StatusServiceUnavailable {
		t.Fatalf("second, with the one slot taken: %d %q, want 503", code, msg)
	}
	close(gate.open)
	if o := s.await(first); o != "queued" {
		t.Fatalf("first: %q", o)
	}
	if code, msg := s.post("issue_comment", second, bodies[1], sign(serveSecret, bodies[1])); code != http.StatusAccepted {
		t.Fatalf("second, delivered again: %d %q, want 202", code, msg)
	}
	if o := s.await(second); o != "queued" {
		t.Fatalf("second: %q", o)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 2 {
		t.Errorf("dispatches = %d, want 2", len(d))
	}
}

// guided-studio through the server: `/studio run --dry-run` is answered by the server itself; the
// plan is dispatched and planned on a runner; the approval of the plan pull request, delivered to
// the server, dispatches the implementation (the server runs no Codex), and that run implements
// on the plan's branch because the reviews on GitHub authorize it. `/studio revoke` is answered
// by the server.
func TestServeDispatchesTheImplementationAnApprovalAuthorizes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "guided-studio", false, nil)
	n := s.issue("Make the jump snappier", taskBody)

	_, dry := s.comment(n, sandbox.Writer, "/studio run --dry-run")
	if _, code, outcome := s.deliver("issue_comment", dry); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("dry run: %d %q", code, outcome)
	}
	if sc := s.statusComments(n); len(sc) != 1 || !strings.Contains(strings.ToLower(sc[0].Body), "dry run") {
		t.Fatalf("the dry run's status comment = %+v", sc)
	} else if want := fmt.Sprintf("studio run gameplay-programmer --task %d --dry-run", n); !strings.Contains(sc[0].Body, "Prompt preview") || !strings.Contains(sc[0].Body, want) {
		// The server has no checkout to build the prompt from: it says where the preview is.
		t.Errorf("the server's dry run does not say where its prompt preview comes from (%q):\n%s", want, sc[0].Body)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Fatalf("a dry run was dispatched: %+v", d)
	}

	_, payload := s.comment(n, sandbox.Writer, "/studio run")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "queued" {
		t.Fatalf("run: %d %q", code, outcome)
	}
	s.script(
		fakecodex.Call{FinalMessage: planText},
		fakecodex.Call{Edits: []fakecodex.Edit{
			{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"},
			{Write: "tests/test_jump.gd", Content: "extends Node\n# jump test\n"},
		}, FinalMessage: "Raised the jump velocity and added a test."},
	)
	runDispatched := func(i int, want string) {
		t.Helper()
		ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
		if len(ds) != i+1 {
			t.Fatalf("dispatches = %+v, want %d", ds, i+1)
		}
		p, err := s.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, ds[i].RunID)
		if err != nil {
			t.Fatal(err)
		}
		if res := s.run("workflow_dispatch", p, s.app); res.code != 0 || res.outputs["status"] != want {
			t.Fatalf("dispatched run %d: exit %d status %q, want %s\nstdout:\n%s\nstderr:\n%s", i, res.code, res.outputs["status"], want, res.stdout, res.stderr)
		}
	}
	runDispatched(0, "awaiting-approval")
	pulls := s.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 1 || !pulls[0].Draft {
		t.Fatalf("pulls after the plan = %+v, want the draft plan", pulls)
	}

	_, review := s.approve(pulls[0].Number, reviewer, ghemu.ReviewSpec{})
	approval, code, outcome := s.deliver("pull_request_review", review)
	if code != http.StatusAccepted || outcome != "queued" {
		t.Fatalf("approval: %d %q", code, outcome)
	}
	ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 2 || ds[1].Inputs["pull"] != strconv.Itoa(pulls[0].Number) || ds[1].Inputs["actor"] != reviewer {
		t.Fatalf("dispatches after the approval = %+v", ds)
	}
	// An approval has no comment to record: the same delivery on another replica (or one that
	// forgot it) finds it recorded on the task's status comment and dispatches nothing.
	reviewBody, other := s.installed(review), s.replica(ctx)
	if code, msg := other.post("pull_request_review", approval, reviewBody, sign(serveSecret, reviewBody)); code != http.StatusAccepted {
		t.Fatalf("the approval on a replica that never saw it: %d %q", code, msg)
	}
	if o := other.await(approval); o != "skipped" {
		t.Errorf("the approval on a replica that never saw it: %q, want skipped", o)
	}
	if got := len(s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)); got != 2 {
		t.Fatalf("%d dispatches, want still 2", got)
	}
	if calls := s.codex.Invocations(); len(calls) != 1 {
		t.Fatalf("%d Codex calls before the implementation's run, want the plan's 1", len(calls))
	}
	runDispatched(1, "done")
	if sc := s.statusComments(n); len(sc) != 1 || !strings.Contains(sc[0].Body, "**done**") {
		t.Errorf("status comments = %+v, want the one, done", sc)
	}
	// The dispatched run rewrote the status comment and kept the record of the approval's delivery.
	late := s.replica(ctx)
	if code, msg := late.post("pull_request_review", approval, reviewBody, sign(serveSecret, reviewBody)); code != http.StatusAccepted {
		t.Fatalf("the approval after the implementation: %d %q", code, msg)
	}
	if o := late.await(approval); o == "queued" || o == "error" {
		t.Errorf("the approval delivered again after the implementation: %q", o)
	}

	// `/studio revoke` is the server's own: it writes GitHub only, and dispatches nothing.
	_, revoke := s.comment(n, sandbox.Writer, "/studio revoke")
	if _, code, outcome := s.deliver("issue_comment", revoke); code != http.StatusAccepted || outcome == "queued" || outcome == "error" {
		t.Errorf("revoke: %d %q, want it answered by the server", code, outcome)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 2 {
		t.Errorf("%d dispatches after the revoke, want still 2", len(d))
	}
}

// The trigger label is a `run` the server dispatches like the comment; a dispatched run reads it
// as `/studio run`.
func TestServeDispatchesATriggerLabel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	n := s.issue("Make the jump snappier", taskBody, "studio:run")
	payload, err := s.Emu.WebhookPayload("issues", "labeled", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: n, Label: "studio:run", Sender: sandbox.Writer})
	if err != nil {
		t.Fatal(err)
	}
	if _, code, outcome := s.deliver("issues", payload); code != http.StatusAccepted || outcome != "queued" {
		t.Fatalf("delivery: %d %q", code, outcome)
	}
	ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 1 || ds[0].Inputs["command"] != "/studio run" || ds[0].Inputs["actor"] != sandbox.Writer || ds[0].Inputs["comment-id"] != "" {
		t.Fatalf("dispatches = %+v", ds)
	}
	if n := len(s.Emu.InstallationTokens()); n != 1 {
		t.Errorf("%d installation tokens minted, want 1", n)
	}
}

// A served dispatch is the App's alone, and names the comment it came from truly: one dispatched
// by a writer (replaying another writer's comment as theirs), or naming a comment its requester
// did not write or that does not hold the command, runs nothing.
func TestServedDispatchesAreTheAppsAndTheirComments(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	n := s.issue("Make the jump snappier", taskBody)
	writers, _ := s.comment(n, sandbox.Writer, "/studio run")
	reviewers, _ := s.comment(n, reviewer, "/studio run")
	for name, tc := range map[string]struct {
		sender, actor, command string
		comment                int64
	}{
		"dispatched by a writer":      {sandbox.Writer, reviewer, "/studio run", reviewers},
		"another writer's comment":    {testAppBot, reviewer, "/studio run", writers},
		"a command the comment lacks": {testAppBot, sandbox.Writer, "/studio run --approved-by-user", writers},
	} {
		inputs := map[string]any{"task": strconv.Itoa(n), "issue": strconv.Itoa(n), "command": tc.command, "actor": tc.actor,
			"comment-id": strconv.FormatInt(tc.comment, 10), "status-comment": "0"}
		payload, err := s.Emu.WebhookPayload("workflow_dispatch", "", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Sender: tc.sender,
			Workflow: "studio.yml", Inputs: inputs})
		if err != nil {
			t.Fatal(err)
		}
		res := s.run("workflow_dispatch", payload, s.app)
		if res.outputs["status"] != "refused" || len(s.codex.Invocations()) != 0 {
			t.Errorf("%s: status %q, %d Codex calls; want refused, none\nstdout:\n%s", name, res.outputs["status"], len(s.codex.Invocations()), res.stdout)
		}
	}
	if sc := s.statusComments(n); len(sc) != 0 {
		t.Errorf("status comments = %+v, want none", sc)
	}
}

// A label event has no comment to record as handled: the same `studio:run` delivery sent to two
// replicas at once, and again later under a new delivery id (a server that forgot the ids it
// saw), dispatches one run. The server takes the label off (the run's button, as the Action
// does), so adding it again dispatches again.
func TestServeDispatchesATriggerLabelOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	other := s.replica(ctx)
	n := s.issue("Make the jump snappier", taskBody, "studio:run")
	payload, err := s.Emu.WebhookPayload("issues", "labeled", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: n, Label: "studio:run", Sender: sandbox.Writer})
	if err != nil {
		t.Fatal(err)
	}
	body := s.installed(payload)
	delivery := newDeliveryID()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, srv := range []*serveWorld{s, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = srv.post("issues", delivery, body, sign(serveSecret, body))
		}()
	}
	wg.Wait()
	if codes[0] != http.StatusAccepted || codes[1] != http.StatusAccepted {
		t.Fatalf("the two replicas answered %v, want both 202", codes)
	}
	outcomes := []string{s.await(delivery), other.await(delivery)}
	slices.Sort(outcomes)
	if !slices.Equal(outcomes, []string{"queued", "skipped"}) {
		t.Errorf("outcomes = %q, want one queued and one skipped", outcomes)
	}
	if _, code, outcome := other.deliver("issues", payload); code != http.StatusAccepted || outcome != "skipped" {
		t.Errorf("the same label event under a new delivery id: %d %q, want skipped", code, outcome)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 1 {
		t.Fatalf("dispatches = %d, want 1", len(d))
	}
	if labels := s.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); slices.Contains(labels, "studio:run") {
		t.Errorf("labels = %q: the trigger label is still on the issue", labels)
	}
	if sc := s.statusComments(n); len(sc) != 1 {
		t.Errorf("status comments = %d, want 1", len(sc))
	}

	// The writer presses the button again.
	if err := s.Emu.AddToken("writer-labels-token", sandbox.Writer); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%srepos/%s/%s/issues/%d/labels", s.Emu.APIURL(), sandbox.Owner, sandbox.Repo, n), strings.NewReader(`{"labels":["studio:run"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token writer-labels-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("adding the label again: %d", resp.StatusCode)
	}
	if _, code, outcome := s.deliver("issues", payload); code != http.StatusAccepted || outcome != "queued" {
		t.Errorf("the label added again: %d %q, want queued", code, outcome)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 2 {
		t.Errorf("dispatches = %d, want 2 after the label was added again", len(d))
	}
}

// What only writes issues, or only dispatches, is the server's own: `/studio workflow
// create-tasks` and `/studio task create` open their task issues, reading the roles from the
// default branch through the API, `/studio accept` appends the proposed block, and `/studio orchestrate` dispatches the first task's run
// itself: no run of the studio workflow is dispatched for the command (no runner minutes).
func TestServeAnswersTaskCreationAndOrchestrationItself(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	parent := s.issue("Vertical slice", "Ship a playable slice.")
	_, payload := s.comment(parent, sandbox.Writer, "/studio workflow create-tasks vertical-slice")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("create-tasks: %d %q", code, outcome)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Fatalf("create-tasks was dispatched: %+v", d)
	}
	if got := s.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent); !slices.Equal(got, []int{parent + 1, parent + 2, parent + 3, parent + 4}) {
		t.Fatalf("sub-issues = %v", got)
	}
	if got := s.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, parent+1); !slices.Contains(got, "studio:status/ready") {
		t.Errorf("#%d labels = %v", parent+1, got)
	}

	_, payload = s.comment(parent, sandbox.Writer, "/studio task create --role producer Write the credits")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("task create: %d %q", code, outcome)
	}
	created, err := s.Emu.Issue(sandbox.Owner, sandbox.Repo, parent+5)
	if err != nil || created.Title != "Write the credits" {
		t.Fatalf("task create opened %+v (%v)", created, err)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Fatalf("task create was dispatched: %+v", d)
	}

	// `/studio accept` appends the studio's proposal to a plain request's body.
	plain := s.issue("Make the jump snappier", "The jump feels floaty.")
	if _, err := s.Emu.AddComment(sandbox.Owner, sandbox.Repo, plain, testAppBot, fmt.Sprintf("<!-- studio:proposal issue=%d -->\nA proposal:\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n```\n", plain)); err != nil {
		t.Fatal(err)
	}
	_, payload = s.comment(plain, sandbox.Writer, "/studio accept")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("accept: %d %q", code, outcome)
	}
	if is, _ := s.Emu.Issue(sandbox.Owner, sandbox.Repo, plain); !strings.Contains(is.Body, "writeFiles: [src/player/jump.gd]") {
		t.Errorf("accept left the body %q", is.Body)
	}
	if d := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(d) != 0 {
		t.Fatalf("accept was dispatched: %+v", d)
	}

	_, payload = s.comment(parent, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d #%d #%d #%d", parent+1, parent+2, parent+3, parent+4))
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome == "queued" || outcome == "error" {
		t.Fatalf("orchestrate: %d %q, want it answered by the server", code, outcome)
	}
	ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 1 || ds[0].Inputs["task"] != strconv.Itoa(parent+1) || ds[0].Inputs["actor"] != nil {
		t.Fatalf("dispatches = %+v, want the first task's run, not a served command", ds)
	}
	if !strings.Contains(s.Emu.Comments(sandbox.Owner, sandbox.Repo, parent)[len(s.Emu.Comments(sandbox.Owner, sandbox.Repo, parent))-1].Body, "studio:orchestration") {
		t.Errorf("no tracking comment on #%d", parent)
	}
}

// An orchestration the server started runs to its end on the runners: each task's dispatched run
// (the Action as the App, the bot that wrote the tracking comment) works its task, releases its
// refs and dispatches the next task, and the tracking comment ends done.
func TestServeStartsAnOrchestrationTheRunnersFinish(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	task := func(title, block string) int {
		return s.issue(title, title+".\n\n```studio\n"+block+"```\n", "studio:task", "studio:status/ready")
	}
	t1 := task("Jump velocity", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n")
	t2 := task("Double jump", fmt.Sprintf("role: gameplay-programmer\nwriteFiles: [src/player/double.gd]\ndependsOn: [\"#%d\"]\nrunPolicy: {review: false}\n", t1))
	tracker := s.issue("Sprint 1", "Run the sprint.")
	s.script(
		fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "velocity\n"}}, FinalMessage: "#1"},
		fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/double.gd", Content: "double\n"}}, FinalMessage: "#2"},
	)
	_, payload := s.comment(tracker, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d #%d", t1, t2))
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome == "queued" || outcome == "error" {
		t.Fatalf("orchestrate: %d %q", code, outcome)
	}
	var order []string
	for done := 0; done < 4; done++ {
		ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
		if done >= len(ds) {
			break
		}
		order = append(order, fmt.Sprint(ds[done].Inputs["task"]))
		p, err := s.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, ds[done].RunID)
		if err != nil {
			t.Fatal(err)
		}
		extra := maps.Clone(s.app)
		extra["GITHUB_RUN_ID"] = fmt.Sprint(6000 + done)
		if res := s.run("workflow_dispatch", p, extra); res.code != 0 {
			t.Fatalf("task run %d: exit %d\n%s\n%s", done, res.code, res.stdout, res.stderr)
		}
	}
	if want := []string{strconv.Itoa(t1), strconv.Itoa(t2)}; !slices.Equal(order, want) {
		t.Errorf("task runs %v, want %v", order, want)
	}
	for _, n := range []int{t1, t2} {
		if st := s.status(n); st != "done" {
			t.Errorf("#%d ends %q", n, st)
		}
	}
	var tracking string
	for _, c := range s.Emu.Comments(sandbox.Owner, sandbox.Repo, tracker) {
		if c.Author == testAppBot && strings.HasPrefix(c.Body, fmt.Sprintf("<!-- studio:orchestration issue=%d -->", tracker)) {
			tracking = c.Body
		}
	}
	if !strings.Contains(tracking, "orchestration: **done**") {
		t.Errorf("the tracking comment does not end done:\n%s", tracking)
	}
}

// A delegated child's controls only write GitHub (cancel its run, move labels and refs, advance
// the parent's orchestration): the server answers `/studio pause` and `/studio continue` itself,
// and the only dispatch that follows is the orchestration's run of the continued child.
func TestServeAnswersAChildsControlsItself(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	if _, err := s.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "main", ghemu.CommitSpec{
		Message: "Add the studio's profile", Files: map[string]string{".codex/profile.json": controlledProfile},
	}); err != nil {
		t.Fatal(err)
	}
	parent := s.issue("Milestone 1", "Plan the first milestone.\n\n```studio\nrole: producer\n```\n")
	answer := `{"summary": "Jump first.", "delegate": [{"role": "gameplay-programmer", "objective": "Raise the jump velocity", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []}]}`
	s.scriptWith(fakecodex.Script{Reviews: []fakecodex.Call{{FinalMessage: answer}, {FinalMessage: fakecodex.PassingReview}}})
	_, payload := s.comment(parent, sandbox.Writer, "/studio run")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "queued" {
		t.Fatalf("run: %d %q", code, outcome)
	}
	ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	p, err := s.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, ds[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if res := s.run("workflow_dispatch", p, s.app); res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("producer's run: exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
	}
	subs := s.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent)
	if len(subs) != 1 || s.status(subs[0]) != "running" {
		t.Fatalf("children %v", subs)
	}
	child := subs[0]
	ds = s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 2 {
		t.Fatalf("dispatches = %+v, want the producer's and the child's", ds)
	}
	childRun := ds[1].RunID

	_, payload = s.comment(child, sandbox.Writer, "/studio pause")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("pause: %d %q", code, outcome)
	}
	if st := s.status(child); st != "awaiting-approval" {
		t.Errorf("after pause: %s", st)
	}
	if run, err := s.Emu.GetWorkflowRun(sandbox.Owner, sandbox.Repo, childRun); err != nil || !run.Cancelled {
		t.Errorf("the child's workflow run was not cancelled: %+v %v", run, err)
	}
	if got := len(s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)); got != 2 {
		t.Errorf("%d dispatches after the pause, want still 2", got)
	}

	_, payload = s.comment(child, sandbox.Writer, "/studio continue")
	if _, code, outcome := s.deliver("issue_comment", payload); code != http.StatusAccepted || outcome != "done" {
		t.Fatalf("continue: %d %q", code, outcome)
	}
	ds = s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 3 || fmt.Sprint(ds[2].Inputs["task"]) != strconv.Itoa(child) || ds[2].Inputs["actor"] != nil || s.status(child) != "running" {
		t.Errorf("continue did not start the child again through its orchestration: %+v, status %s", ds, s.status(child))
	}
}

// A role label stays on the issue (it is the task's role), so it is not claimed as studio:run
// is: the server records the delivery on the task's status comment instead. The same delivery
// to two replicas at once, and later to a third that never saw it, dispatches one run.
func TestServeDispatchesARoleLabelDeliveryOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newServeWorld(t, ctx, "fast-prototype", false, nil)
	other := s.replica(ctx)
	const label = "studio:role/gameplay-programmer"
	n := s.issue("Make the jump snappier", "Make the jump feel snappier.\n\n```studio\nwriteFiles: [src/player/jump.gd]\n```\n", label)
	payload, err := s.Emu.WebhookPayload("issues", "labeled", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: n, Label: label, Sender: sandbox.Writer})
	if err != nil {
		t.Fatal(err)
	}
	body := s.installed(payload)
	delivery := newDeliveryID()
	var wg sync.WaitGroup
	for _, srv := range []*serveWorld{s, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, msg := srv.post("issues", delivery, body, sign(serveSecret, body)); code != http.StatusAccepted {
				t.Errorf("a replica answered %d %q", code, msg)
			}
		}()
	}
	wg.Wait()
	outcomes := []string{s.await(delivery), other.await(delivery)}
	slices.Sort(outcomes)
	if !slices.Equal(outcomes, []string{"queued", "skipped"}) {
		t.Errorf("outcomes = %q, want one queued and one skipped", outcomes)
	}
	third := s.replica(ctx)
	if code, msg := third.post("issues", delivery, body, sign(serveSecret, body)); code != http.StatusAccepted {
		t.Fatalf("a replica that never saw the delivery: %d %q", code, msg)
	}
	if o := third.await(delivery); o != "skipped" {
		t.Errorf("the delivery on a replica that never saw it: %q, want skipped", o)
	}
	ds := s.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 1 || ds[0].Inputs["command"] != "/studio run" {
		t.Fatalf("dispatches = %+v, want 1", ds)
	}
	// The label is the task's role: it stays.
	if labels := s.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, label) {
		t.Errorf("labels = %q", labels)
	}
	if sc := s.statusComments(n); len(sc) != 1 || !strings.Contains(sc[0].Body, "<!-- studio:deliveries "+delivery+" -->") {
		t.Errorf("status comments = %+v, want one recording the delivery", sc)
	}
}
