package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v60/github"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/ghapp"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/orgdefaults"
	"github.com/codex-studio/studio-action/policy"
)

// The bounds of the lock the server takes on a task while it dispatches: it holds it for a few
// requests, so it waits little (a run holding it gets the command queued behind it instead) and
// its record expires soon if the server dies holding it.
var serveLocks = bot.LockSettings{LockWait: 5 * time.Second, LockPoll: 250 * time.Millisecond, LockPollMax: time.Second, LockTTL: 5 * time.Minute}

// serveRunID names the server in lock records and on status comments.
const serveRunID = "studio-serve"

// webhookServer handles POST /webhook.
type webhookServer struct {
	cfg  serveConfig
	log  *slog.Logger
	red  *codex.Redactor
	m    *serveMetrics
	apps *ghapp.Installations
	hc   *http.Client

	// slots bounds the deliveries handled at once (the 503 backpressure); writing bounds those
	// past their reaction (bot.ServeMode.Slot).
	slots   chan struct{}
	writing chan struct{}
	// seen are the delivery ids accepted lately (a delivery redelivered from the App's settings or
	// its API keeps its id).
	seen *lru.Cache[string, struct{}]
	// installs remembers the installation of a repository whose deliveries name none.
	installs *lru.Cache[string, int64]

	draining atomic.Bool
	wg       sync.WaitGroup
	n        atomic.Int64
	// deliveries is the context of every accepted delivery: not the signal's, so SIGTERM lets
	// them finish; cancelled only when the drain timeout ends.
	deliveries context.Context
	cancelAll  context.CancelFunc
	// handled is serveHooks.handled.
	handled func(delivery, outcome string)
}

func newWebhookServer(cfg serveConfig, log *slog.Logger, red *codex.Redactor, m *serveMetrics, apps *ghapp.Installations, hc *http.Client) *webhookServer {
	seen, _ := lru.New[string, struct{}](cfg.seenDeliveries)
	installs, _ := lru.New[string, int64](1024)
	ctx, cancel := context.WithCancel(context.Background())
	return &webhookServer{cfg: cfg, log: log, red: red, m: m, apps: apps, hc: hc,
		slots: make(chan struct{}, cfg.maxInFlight), writing: make(chan struct{}, serveWriting), seen: seen, installs: installs,
		deliveries: ctx, cancelAll: cancel}
}

func (s *webhookServer) inFlight() int64 { return s.n.Load() }

// drain waits for the deliveries in flight; false when ctx ended first.
func (s *webhookServer) drain(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *webhookServer) healthz(w http.ResponseWriter, _ *http.Request) {
	if s.draining.Load() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ok\n")
}

// envelope is what the server reads of any payload before the bot decodes it: where it comes from.
type envelope struct {
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
}

// ServeHTTP answers one delivery within the second GitHub allows: drain, method, size and
// signature checks, then a decoded event handed to the bot, each answer counted and logged with
// its delivery id. The checks stay inline so the order in which a delivery is refused reads top to
// bottom.
func (s *webhookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	log := s.log.With("delivery", delivery, "event", event)
	answer := func(code int, outcome, msg string) {
		s.m.deliveries.WithLabelValues(metricEvent(event), outcome).Inc()
		level := slog.LevelInfo
		if code == http.StatusServiceUnavailable {
			level = slog.LevelWarn // turned away: someone has to redeliver it (docs/serve.md)
		}
		log.Log(r.Context(), level, "delivery", "outcome", outcome, "status", code, "detail", s.red.Redact(msg))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		io.WriteString(w, msg+"\n")
	}
	if s.draining.Load() {
		answer(http.StatusServiceUnavailable, "draining", "shutting down; deliver again")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			answer(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is over %d bytes", s.cfg.maxBody))
			return
		}
		answer(http.StatusBadRequest, "unreadable", "the body could not be read")
		return
	}
	if !s.verified(r.Header.Get("X-Hub-Signature-256"), body) {
		// Nothing of an unverified delivery is read, not even its event's payload.
		answer(http.StatusUnauthorized, "bad_signature", "X-Hub-Signature-256 is missing or does not match the webhook secret")
		return
	}
	if event == "" || delivery == "" {
		answer(http.StatusBadRequest, "malformed", "X-GitHub-Event and X-GitHub-Delivery are required")
		return
	}
	if s.seen.Contains(delivery) {
		answer(http.StatusOK, "duplicate", "this delivery was handled already")
		return
	}
	if event == "ping" {
		answer(http.StatusOK, "ping", "pong")
		return
	}
	tr, err := bot.DecodeEvent(event, body)
	var skip *bot.Skip
	if errors.As(err, &skip) {
		answer(http.StatusOK, "ignored", skip.Reason)
		return
	}
	if err != nil {
		answer(http.StatusBadRequest, "malformed", err.Error())
		return
	}
	if tr.Kind == bot.TriggerDispatch {
		// The workflow runs the server dispatched handle these, on their runner.
		answer(http.StatusOK, "ignored", "workflow_dispatch is handled by the dispatched workflow run")
		return
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Repository.Name == "" || env.Repository.Owner.Login == "" {
		answer(http.StatusBadRequest, "malformed", "the payload names no repository")
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		// Backpressure rather than unbounded goroutines. GitHub does not redeliver a failed delivery
		// on its own: the 503 is logged with its delivery id and counted (outcome "busy") for an
		// operator to redeliver (docs/serve.md).
		answer(http.StatusServiceUnavailable, "busy", fmt.Sprintf("%d deliveries are in flight; deliver again", s.cfg.maxInFlight))
		return
	}
	if ok, _ := s.seen.ContainsOrAdd(delivery, struct{}{}); ok {
		<-s.slots
		answer(http.StatusOK, "duplicate", "this delivery was handled already")
		return
	}
	s.wg.Add(1)
	s.n.Add(1)
	s.m.inFlight.Inc()
	go s.handle(log, delivery, event, arrived, env, tr)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "accepted\n")
}

// verified checks the body's HMAC-SHA256 against each configured secret (go-github compares in
// constant time).
func (s *webhookServer) verified(signature string, body []byte) bool {
	if signature == "" {
		return false
	}
	for _, secret := range s.cfg.secrets {
		if github.ValidateSignature(signature, body, secret) == nil {
			return true
		}
	}
	return false
}

// handle runs one accepted delivery through the bot, as the App's installation on the repository.
func (s *webhookServer) handle(log *slog.Logger, delivery, event string, arrived time.Time, env envelope, tr bot.Trigger) {
	// The slot is free before the outcome is recorded: whoever sees the outcome (an operator
	// redelivering after a 503, a test) finds room for the next delivery.
	free := sync.OnceFunc(func() {
		<-s.slots
		s.n.Add(-1)
		s.m.inFlight.Dec()
	})
	defer s.wg.Done()
	defer free()
	owner, repo := env.Repository.Owner.Login, env.Repository.Name
	log = log.With("repo", owner+"/"+repo)
	ctx, cancel := context.WithTimeout(s.deliveries, s.cfg.deliveryTimeout)
	defer cancel()
	a := &arrival{delivery: delivery, at: arrived}
	ctx = context.WithValue(ctx, arrivalKey{}, a)
	outcome := func(o string, args ...any) {
		free()
		s.m.deliveries.WithLabelValues(metricEvent(event), o).Inc()
		args = append([]any{"outcome", o, "ms", time.Since(arrived).Milliseconds()}, args...)
		if ack := a.ack.Load(); ack > 0 {
			args = append(args, "ack_ms", float64(ack)/1e6)
		}
		log.Info("delivery", args...)
		if s.handled != nil {
			s.handled(delivery, o)
		}
	}
	client, err := s.client(ctx, env.Installation.ID, owner, repo)
	if err != nil {
		outcome("error", "err", s.red.Redact(err.Error()))
		return
	}
	// The gate counts approvals as the organisation's defaults say, as the action's run does.
	orgDefaults := orgdefaults.New(owner+"/"+policy.DefaultOrgRepo, client.InRepo(owner, policy.DefaultOrgRepo))
	b := bot.New(bot.Deps{GitHub: client, Log: &lineWriter{log: log, red: s.red}, Redactor: s.red, OrgDefaults: orgDefaults}, bot.Settings{
		BotLogin: s.apps.BotLogin(), RunID: serveRunID, DispatchWorkflow: s.cfg.dispatchWorkflow,
		Serve:        &bot.ServeMode{ServerURL: s.cfg.serverURL, Owner: owner, Repo: repo, Slot: s.writeSlot, Delivery: delivery},
		LockSettings: serveLocks,
	})
	out, err := b.Handle(ctx, tr)
	if err != nil {
		outcome("error", "err", s.red.Redact(hub.Explain(err)))
		return
	}
	status := out.Status
	if status == "" {
		status = "done"
	}
	outcome(status, "skip", out.Skip)
}

// serveWriting is how many deliveries write past their reaction at once (the lock, the status
// comment, the dispatch: about eight requests each). The rest wait, already acknowledged.
const serveWriting = 16

func (s *webhookServer) writeSlot(ctx context.Context) (func(), error) {
	select {
	case s.writing <- struct{}{}:
		return func() { <-s.writing }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// client is an API client of the repository for one delivery, authenticated as the App's
// installation: a new one each time (a hub.Client remembers what it read of the repository, the
// default branch's name among them), sharing the installation's token source and the transport.
func (s *webhookServer) client(ctx context.Context, installation int64, owner, repo string) (*hub.Client, error) {
	full := owner + "/" + repo
	if installation == 0 {
		if id, ok := s.installs.Get(full); ok {
			installation = id
		} else {
			id, err := s.apps.ForRepo(ctx, owner, repo)
			if err != nil {
				return nil, err
			}
			s.installs.Add(full, id)
			installation = id
		}
	}
	return hub.NewClientFromTokenSource(s.hc, s.cfg.apiURL, s.apps.TokenSource(installation), owner, repo)
}

// metricEvent keeps the event label's values to GitHub's event names.
func metricEvent(event string) string {
	for _, r := range event {
		if !(r >= 'a' && r <= 'z' || r == '_') {
			return "other"
		}
	}
	if event == "" || len(event) > 40 {
		return "other"
	}
	return event
}

type arrivalKey struct{}

// arrival is when a delivery arrived, and how long after it its reaction was accepted.
type arrival struct {
	delivery string
	at       time.Time
	once     sync.Once
	ack      atomic.Int64 // nanoseconds; 0 until the reaction
}

func arrivalOf(ctx context.Context) *arrival {
	a, _ := ctx.Value(arrivalKey{}).(*arrival)
	return a
}
