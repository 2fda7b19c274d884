package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/ghapp"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/gitops"
)

// `studio serve`: the studio as a GitHub App's webhook server (docs/serve.md). It verifies each
// delivery, answers what needs no runner itself within a second, and dispatches every Codex run
// to the repository's studio workflow; it keeps no state but a bounded set of the deliveries it
// saw (issues, labels, refs, check runs and comments are the state, as in the Action).

// serveConfig is the server's configuration, read from its flags and environment in one place.
type serveConfig struct {
	listen     string
	appID      string
	privateKey string
	// keyName is where the key came from (STUDIO_APP_PRIVATE_KEY or the file variable), for the
	// message that asks to fix it.
	keyName string
	// secrets are the webhook secrets a signature may be made with: the current one, then the
	// previous one while it is being rotated.
	secrets          [][]byte
	apiURL           string
	serverURL        string
	dispatchWorkflow string
	// maxInFlight bounds the deliveries handled at once; one more is answered 503.
	maxInFlight int
	// maxBody bounds a delivery's body (GitHub caps payloads at 25 MB).
	maxBody int64
	// deliveryTimeout bounds one delivery's handling; drainTimeout the wait for the ones in
	// flight at shutdown.
	deliveryTimeout, drainTimeout time.Duration
	// seenDeliveries is how many X-GitHub-Delivery ids are remembered.
	seenDeliveries int
}

// Defaults of the server's bounds.
const (
	defaultListen         = ":8080"
	defaultMaxInFlight    = 256
	defaultMaxBody        = 25 << 20
	defaultDeliveryTimout = 2 * time.Minute
	defaultDrainTimeout   = 2 * time.Minute
	defaultSeenDeliveries = 10000
)

// serveConfigOf reads the environment (docs/serve.md, "Configuration").
func serveConfigOf(getenv func(string) string, listen string) (serveConfig, error) {
	c := serveConfig{
		listen:           listen,
		appID:            strings.TrimSpace(getenv("STUDIO_APP_ID")),
		privateKey:       getenv("STUDIO_APP_PRIVATE_KEY"),
		apiURL:           orDefault(strings.TrimSpace(getenv("GITHUB_API_URL")), "https://api.github.com"),
		serverURL:        orDefault(strings.TrimSpace(getenv("GITHUB_SERVER_URL")), "https://github.com"),
		dispatchWorkflow: orDefault(strings.TrimSpace(getenv("STUDIO_DISPATCH_WORKFLOW")), "studio.yml"),
		maxInFlight:      defaultMaxInFlight,
		maxBody:          defaultMaxBody,
		deliveryTimeout:  defaultDeliveryTimout,
		drainTimeout:     defaultDrainTimeout,
		seenDeliveries:   defaultSeenDeliveries,
	}
	if c.listen == "" {
		c.listen = defaultListen
	}
	var problems []string
	if c.appID == "" {
		problems = append(problems, "STUDIO_APP_ID is empty: set it to the GitHub App's id (the App's settings page, \"App ID\")")
	}
	switch file := strings.TrimSpace(getenv("STUDIO_APP_PRIVATE_KEY_FILE")); {
	case file != "" && strings.TrimSpace(c.privateKey) != "":
		problems = append(problems, "both STUDIO_APP_PRIVATE_KEY and STUDIO_APP_PRIVATE_KEY_FILE are set: set one")
	case file != "":
		if b, err := os.ReadFile(file); err != nil {
			problems = append(problems, fmt.Sprintf("STUDIO_APP_PRIVATE_KEY_FILE: %v", err))
		} else {
			c.privateKey, c.keyName = string(b), "the file STUDIO_APP_PRIVATE_KEY_FILE names ("+file+")"
		}
	case strings.TrimSpace(c.privateKey) == "":
		problems = append(problems, "STUDIO_APP_PRIVATE_KEY (the PEM) or STUDIO_APP_PRIVATE_KEY_FILE (a file holding it) must be set")
	}
	for _, name := range []string{"STUDIO_WEBHOOK_SECRET", "STUDIO_WEBHOOK_SECRET_PREVIOUS"} {
		if s := getenv(name); s != "" {
			c.secrets = append(c.secrets, []byte(s))
		}
	}
	if getenv("STUDIO_WEBHOOK_SECRET") == "" {
		problems = append(problems, "STUDIO_WEBHOOK_SECRET is empty: set it to the App's webhook secret (every delivery is verified with it)")
	}
	if v := strings.TrimSpace(getenv("STUDIO_SERVE_MAX_IN_FLIGHT")); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			problems = append(problems, fmt.Sprintf("STUDIO_SERVE_MAX_IN_FLIGHT=%q is not a positive number", v))
		} else {
			c.maxInFlight = n
		}
	}
	if len(problems) > 0 {
		return c, errors.New(strings.Join(problems, "\n"))
	}
	return c, nil
}

// serveHooks are what a test hands the server: the HTTP base transport of its GitHub calls, a
// listener already bound, and a callback per acknowledged delivery. nil everywhere in production.
type serveHooks struct {
	transport http.RoundTripper
	listener  net.Listener
	// ready is told the address once the server accepts deliveries.
	ready func(addr string)
	// acked is told each reaction's latency from the delivery's arrival.
	acked func(delivery string, d time.Duration)
	// handled is told each accepted delivery's outcome once its handling ended.
	handled func(delivery, outcome string)
}

func newServeCmd(e env, hooks *serveHooks) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR]",
		Short: "serve a GitHub App's webhooks: answer at once, dispatch Codex runs to Actions",
		Long: `Serve a GitHub App's webhook deliveries (docs/serve.md): POST /webhook, GET /healthz,
GET /metrics. Configured by the environment: STUDIO_APP_ID, STUDIO_APP_PRIVATE_KEY or
STUDIO_APP_PRIVATE_KEY_FILE, STUDIO_WEBHOOK_SECRET (and STUDIO_WEBHOOK_SECRET_PREVIOUS while
rotating it), GITHUB_API_URL and GITHUB_SERVER_URL for GitHub Enterprise Server,
STUDIO_DISPATCH_WORKFLOW (default studio.yml), STUDIO_SERVE_MAX_IN_FLIGHT (default 256).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := serveConfigOf(e.getenv, listen)
			if err != nil {
				return failf("%v", err)
			}
			if hooks == nil {
				hooks = &serveHooks{}
			}
			log := slog.New(slog.NewJSONHandler(e.stderr, nil))
			if err := runServe(c.Context(), cfg, log, hooks); err != nil {
				return failf("%v", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", defaultListen, "address to listen on")
	return cmd
}

// runServe serves until ctx ends (SIGTERM, SIGINT), then stops accepting, finishes the
// deliveries in flight and returns nil.
func runServe(ctx context.Context, cfg serveConfig, log *slog.Logger, hooks *serveHooks) error {
	red := codex.NewRedactor()
	red.Add(ghapp.SecretLines(cfg.privateKey)...)
	for _, s := range cfg.secrets {
		red.Add(string(s))
	}
	m := newServeMetrics()
	base := hooks.transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc := githubServeHTTP(&metricsTransport{base: base, m: m, acked: hooks.acked}, log, red)
	apps, err := ghapp.NewInstallations(ctx, ghapp.Config{
		AppID: cfg.appID, PrivateKey: cfg.privateKey, APIURL: cfg.apiURL, HTTPClient: hc,
		IDName: "STUDIO_APP_ID", KeyName: orText(cfg.keyName, "STUDIO_APP_PRIVATE_KEY"),
		OnToken: func(tok string) { red.Add(gitops.SecretForms(tok)...) },
		Log: func(format string, args ...any) {
			log.Info("github app", "line", red.Redact(fmt.Sprintf(format, args...)))
		},
	})
	if err != nil {
		return fmt.Errorf("GitHub App: %w", err)
	}
	s := newWebhookServer(cfg, log, red, m, apps, hc)
	s.handled = hooks.handled
	mux := http.NewServeMux()
	mux.Handle("POST /webhook", s)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", m.handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	ln := hooks.listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.listen); err != nil {
			return err
		}
	}
	log.Info("serving", "addr", ln.Addr().String(), "app", apps.BotLogin(), "api", cfg.apiURL, "max_in_flight", cfg.maxInFlight)
	if hooks.ready != nil {
		hooks.ready(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting (healthz says so at once), let the requests being read end, then wait for
	// the deliveries already accepted: GitHub does not send them again.
	s.draining.Store(true)
	log.Info("shutting down: finishing the deliveries in flight", "in_flight", s.inFlight())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.drainTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err.Error())
	}
	if !s.drain(sctx) {
		log.Warn("shutdown: deliveries still in flight after the drain timeout", "in_flight", s.inFlight())
		s.cancelAll()
	}
	log.Info("stopped")
	return nil
}

// githubServeHTTP is the retrying client of every GitHub call, its retries logged.
func githubServeHTTP(base http.RoundTripper, log *slog.Logger, red *codex.Redactor) *http.Client {
	return hub.NewHTTPClient(base, hub.RetryPolicy{Log: func(format string, args ...any) {
		log.Info("github", "line", red.Redact(fmt.Sprintf(format, args...)))
	}})
}

// lineWriter turns the bot's log lines into structured records of one delivery.
type lineWriter struct {
	log *slog.Logger
	red *codex.Redactor
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		if line != "" {
			w.log.Info("bot", "line", w.red.Redact(line))
		}
	}
}

var _ io.Writer = (*lineWriter)(nil)
