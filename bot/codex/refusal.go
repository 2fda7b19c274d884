package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// RefusalKind says why the model API refused a call, which decides what the user must change.
type RefusalKind string

const (
	// RefusedKey: 401 or 403, the key is not accepted or may not do this.
	RefusedKey RefusalKind = "key"
	// RefusedModel: the model does not exist or this key may not use it.
	RefusedModel RefusalKind = "model"
	// RefusedEndpoint: a 404 that names no model; the base URL points at the wrong place.
	RefusedEndpoint RefusalKind = "endpoint"
	// RefusedQuota: 429 insufficient_quota; the account has no credit left.
	RefusedQuota RefusalKind = "quota"
	// RefusedRateLimit: 429 after Codex's retries ran out.
	RefusedRateLimit RefusalKind = "rate-limit"
	// RefusedUnreachable: no answer (connection refused, no such host, no response within the
	// proxy's bound, a stream that went silent) after Codex's retries.
	RefusedUnreachable RefusalKind = "unreachable"
	// RefusedServer: the API failed on its side (5xx) after Codex's retries.
	RefusedServer RefusalKind = "server"
)

// maxRefusalMessage bounds the API's words kept from a refusal: enough for any API error, short
// enough for a status comment.
const maxRefusalMessage = 1000

// APIRefusal is a Codex call the model API refused, or that never got an answer. Another call
// (a fix pass, a review) would be refused the same way, so the run ends at once.
type APIRefusal struct {
	Kind RefusalKind `json:"kind"`
	// Status is the HTTP status when Codex reported one; 0 when its message names none.
	Status int `json:"status,omitempty"`
	// Message is Codex's final error message: the API's own words where Codex passes them on,
	// without Codex's ", url: …" suffix (in the action that URL is the studio's proxy, not the API).
	Message string `json:"message"`
	// Model is the model the refused call asked for.
	Model string `json:"model,omitempty"`
}

func (e *APIRefusal) Error() string { return e.Headline() + ": " + e.Message }

// Headline names what the API did, without its words: "the model API refused the call (HTTP
// 401)". An unreachable API's status is the proxy's (502, 504), not the API's, so it is left out.
func (e *APIRefusal) Headline() string {
	what := "the model API refused the call"
	switch e.Kind {
	case RefusedUnreachable:
		return "the model API did not answer"
	case RefusedServer:
		what = "the model API failed"
	}
	if e.Status != 0 {
		what += " (HTTP " + strconv.Itoa(e.Status) + ")"
	}
	return what
}

// Refusal classifies a failed call: the *APIRefusal when the model API refused it (or could not
// be reached), nil for any other failure (a timeout, a crash, a rejected patch). Only Codex's own
// error channels are read, never the agent's messages or command output: its turn.failed message,
// or, for a Codex that ended before a turn, its "ERROR: " line on stderr. Error items alone are
// not enough: Codex also uses them for warnings (an unknown model's metadata) and for retries it
// went on to survive.
func Refusal(res Result) *APIRefusal {
	var budget *BudgetError
	if !res.Failed() || res.TimedOut || errors.As(res.Err, &budget) {
		// A budget stop is the proxy's own refusal (budget.go), not the API's: the setup is fine.
		return nil
	}
	if te := res.Events.TurnError; te != nil {
		// The app server says it in structure: judge that, never the agent's or Codex's prose.
		ref := ClassifyTurnError(*te)
		if ref != nil {
			ref.Model = res.Model
		}
		return ref
	}
	msg := strings.TrimSpace(res.Events.TurnFailed)
	if msg == "" || msg == "turn failed" {
		msg = lastStderrError(res.Stderr)
	}
	if msg == "" {
		return nil
	}
	ref := ClassifyRefusal(msg)
	if ref != nil {
		ref.Model = res.Model
	}
	return ref
}

// lastStderrError is the last line Codex itself printed as a fatal error ("ERROR: …").
func lastStderrError(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "ERROR: "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

var (
	// Codex 0.171.0 words an HTTP error as "unexpected status 401 Unauthorized: <body>, url: <url>"
	// and a retryable one it gave up on as "exceeded retry limit, last status: 429 Too Many Requests".
	unexpectedStatus = regexp.MustCompile(`(?s)unexpected status (\d{3})(?: [^:]*)?: (.*)`)
	lastStatus       = regexp.MustCompile(`last status: (\d{3})`)
	urlSuffix        = regexp.MustCompile(`, url: \S+\s*$`)
	// What Codex says when it could not reach the endpoint at all, or the stream went silent.
	unreachableWords = regexp.MustCompile(`connection failed|error sending request|connection refused|stream disconnected before completion|idle timeout waiting for sse|waiting for network|dns error|failed to lookup address|no such host|timed out`)
)

// proxyPrefix starts every error the studio's own proxy answers with (proxy.go).
const proxyPrefix = "model proxy: "

// ClassifyRefusal decides, from Codex's final error message alone, whether the model API refused
// the call and why; nil means the message is not an API refusal.
func ClassifyRefusal(msg string) *APIRefusal {
	status, body := statusAndBody(msg)
	return classify(status, body)
}

// statusAndBody splits Codex's words for an HTTP error into the status they name and the API's body.
func statusAndBody(msg string) (int, string) {
	msg = strings.TrimSpace(msg)
	status := 0
	body := msg
	if m := unexpectedStatus.FindStringSubmatch(msg); m != nil {
		status, _ = strconv.Atoi(m[1])
		body = m[2]
	} else if m := lastStatus.FindStringSubmatch(msg); m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	return status, strings.TrimSpace(urlSuffix.ReplaceAllString(body, ""))
}

// ClassifyTurnError judges an app-server turn error: the HTTP status is the structured one Codex
// forwarded, and codexErrorInfo decides what the status alone does not (a connection that never
// got an answer, an account out of quota); nil means not an API refusal (a sandbox error, a
// context window exceeded).
func ClassifyTurnError(te TurnError) *APIRefusal {
	status, body := statusAndBody(te.Message)
	if te.HTTPStatus != 0 {
		status = te.HTTPStatus
	}
	if ref := classify(status, body); ref != nil {
		return ref
	}
	ref := &APIRefusal{Status: status, Message: bound(body)}
	switch te.Info {
	case "unauthorized":
		ref.Kind = RefusedKey
	case "modelNotFound":
		ref.Kind = RefusedModel
	case "usageLimitExceeded":
		ref.Kind = RefusedQuota
	case "rateLimitExceeded":
		ref.Kind = RefusedRateLimit
	case "serverOverloaded", "internalServerError":
		ref.Kind = RefusedServer
	case "httpConnectionFailed", "responseStreamConnectionFailed", "responseStreamDisconnected", "responseTooManyFailedAttempts":
		if status != 0 {
			return nil // a status classify did not take is no refusal the user can fix
		}
		ref.Kind = RefusedUnreachable
	default:
		return nil
	}
	return ref
}

// classify decides from an HTTP status (0: none) and the API's body whether the API refused.
func classify(status int, body string) *APIRefusal {
	// A 4xx Codex does not know is passed on as the raw body: read the API's JSON error.
	var code string
	if words, c, ok := apiErrorBody(body); ok {
		body, code = words, c
	}
	ref := &APIRefusal{Status: status, Message: bound(body)}
	lower := strings.ToLower(body + " " + code)
	switch {
	case strings.HasPrefix(body, proxyPrefix):
		// The proxy answers 502/504 for an upstream it cannot reach; anything else it says
		// (an unknown client key, a route it does not forward) is the studio's own fault.
		if status != 502 && status != 504 {
			return nil
		}
		ref.Kind = RefusedUnreachable
	case code == "insufficient_quota" || strings.Contains(lower, "quota exceeded") || strings.Contains(lower, "exceeded your current quota"):
		ref.Kind = RefusedQuota
	case status == 429 || code == "rate_limit_exceeded" || strings.Contains(lower, "rate limit reached"):
		ref.Kind = RefusedRateLimit
	case code == "model_not_found" || modelUnavailable.MatchString(lower) || strings.Contains(lower, "access to model"):
		ref.Kind = RefusedModel
	case status == 401 || status == 403 || code == "invalid_api_key" || strings.Contains(lower, "incorrect api key"):
		ref.Kind = RefusedKey
	case status == 404:
		ref.Kind = RefusedEndpoint
	case status >= 500 || strings.Contains(lower, "experiencing high demand"):
		ref.Kind = RefusedServer
	case status == 0 && unreachableWords.MatchString(lower):
		ref.Kind = RefusedUnreachable
	default:
		return nil
	}
	return ref
}

// apiErrorBody reads an OpenAI-shaped error body, {"error":{"message","code","type"}}.
func apiErrorBody(body string) (message, code string, ok bool) {
	if !strings.HasPrefix(body, "{") {
		return "", "", false
	}
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Error == nil || e.Error.Message == "" {
		return "", "", false
	}
	code = e.Error.Type
	if c, ok := e.Error.Code.(string); ok && c != "" {
		code = c
	} else if e.Error.Code != nil {
		code = fmt.Sprint(e.Error.Code)
	}
	return e.Error.Message, code, true
}

func bound(s string) string {
	if r := []rune(s); len(r) > maxRefusalMessage {
		return string(r[:maxRefusalMessage]) + "…"
	}
	return s
}
