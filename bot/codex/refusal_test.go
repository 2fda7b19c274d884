package codex

import (
	"strings"
	"testing"
)

// The messages are the real CLI's (0.171.0), recorded through the studio's proxy against the
// scripted model server (realcli_test.go), plus the API's own words for the cases the server
// cannot produce.
func TestClassifyRefusal(t *testing.T) {
	const proxyURL = ", url: http://127.0.0.1:46781/v1/responses"
	tests := []struct {
		name    string
		msg     string
		kind    RefusalKind // "" means not a refusal
		status  int
		message string
	}{
		{"401 bad key", "unexpected status 401 Unauthorized: Incorrect API key provided: sk-CANA***2b. You can find your API key at https://platform.openai.com/account/api-keys." + proxyURL,
			RefusedKey, 401, "Incorrect API key provided: sk-CANA***2b. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"401 no key", "unexpected status 401 Unauthorized: You didn't provide an API key." + proxyURL, RefusedKey, 401, "You didn't provide an API key."},
		{"403 region", "unexpected status 403 Forbidden: Project does not have access to this region" + proxyURL, RefusedKey, 403, "Project does not have access to this region"},
		{"403 scopes", "unexpected status 403 Forbidden: You have insufficient permissions for this operation. Missing scopes: api.responses.write." + proxyURL, RefusedKey, 403,
			"You have insufficient permissions for this operation. Missing scopes: api.responses.write."},
		{"403 model", "unexpected status 403 Forbidden: Project `proj_1` does not have access to model `gpt-5.6-sol`" + proxyURL, RefusedModel, 403, "Project `proj_1` does not have access to model `gpt-5.6-sol`"},
		// Codex passes a 404's message on without its status.
		{"404 model_not_found", "The model `gpt-5.5` does not exist or you do not have access to it.", RefusedModel, 0, "The model `gpt-5.5` does not exist or you do not have access to it."},
		{"404 model, fake server's words", "model gpt-5.6-sol is not available for this account", RefusedModel, 0, "model gpt-5.6-sol is not available for this account"},
		{"404 model as raw JSON", `{"error":{"message":"The model ` + "`x`" + ` does not exist","type":"invalid_request_error","code":"model_not_found"}}`, RefusedModel, 0, "The model `x` does not exist"},
		{"404 wrong base URL", "unexpected status 404 Not Found: 404 page not found" + proxyURL, RefusedEndpoint, 404, "404 page not found"},
		{"429 quota, Codex's words", "Quota exceeded. Check your plan and billing details.", RefusedQuota, 0, "Quota exceeded. Check your plan and billing details."},
		{"429 quota as raw JSON", `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`,
			RefusedQuota, 0, "You exceeded your current quota, please check your plan and billing details."},
		{"429 no retry left", "exceeded retry limit, last status: 429 Too Many Requests", RefusedRateLimit, 429, "exceeded retry limit, last status: 429 Too Many Requests"},
		{"429 in the stream", "stream disconnected before completion: Rate limit reached for gpt-5.5 on tokens per min (TPM). Please try again in 2s.", RefusedRateLimit, 0,
			"stream disconnected before completion: Rate limit reached for gpt-5.5 on tokens per min (TPM). Please try again in 2s."},
		{"closed port behind the proxy", "unexpected status 502 Bad Gateway: model proxy: the model API at http://127.0.0.1:43913/v1 is unreachable: dial tcp 127.0.0.1:43913: connect: connection refused" + proxyURL,
			RefusedUnreachable, 502, "model proxy: the model API at http://127.0.0.1:43913/v1 is unreachable: dial tcp 127.0.0.1:43913: connect: connection refused"},
		{"silent endpoint behind the proxy", "unexpected status 504 Gateway Timeout: model proxy: the model API at https://llm.example/v1 sent no response within 2m0s" + proxyURL,
			RefusedUnreachable, 504, "model proxy: the model API at https://llm.example/v1 sent no response within 2m0s"},
		{"closed port, no proxy", "Connection failed: error sending request for url (http://127.0.0.1:9/v1/responses)", RefusedUnreachable, 0, "Connection failed: error sending request for url (http://127.0.0.1:9/v1/responses)"},
		{"stream idle", "stream disconnected before completion: idle timeout waiting for SSE", RefusedUnreachable, 0, "stream disconnected before completion: idle timeout waiting for SSE"},
		{"stream cut", "stream disconnected before completion: stream closed before response.completed", RefusedUnreachable, 0, "stream disconnected before completion: stream closed before response.completed"},
		{"500, Codex's words", "We’re currently experiencing high demand, which may cause temporary errors.", RefusedServer, 0, "We’re currently experiencing high demand, which may cause temporary errors."},
		{"503", "unexpected status 503 Service Unavailable: upstream connect error" + proxyURL, RefusedServer, 503, "upstream connect error"},

		// Not refusals: the studio's own proxy, and failures a fix pass may well get past.
		{"proxy's own 401", "unexpected status 401 Unauthorized: model proxy: unknown client key" + proxyURL, "", 0, ""},
		{"proxy refuses a route", "unexpected status 404 Not Found: model proxy: GET /v1/files is not forwarded" + proxyURL, "", 0, ""},
		{"400 the server does not know", `{"error":{"code":"script_exhausted","message":"fakemodel: script exhausted after 1 turns","type":"invalid_request_error"}}`, "", 0, ""},
		{"missing variable", "Missing environment variable: CODEX_STUDIO_PROXY_KEY.", "", 0, ""},
		{"plain failure", "turn failed", "", 0, ""},
		{"empty", "", "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifyRefusal(tc.msg)
			if tc.kind == "" {
				if got != nil {
					t.Fatalf("ClassifyRefusal(%q) = %+v, want nil", tc.msg, got)
				}
				return
			}
			if got == nil {
				t.Fatalf("ClassifyRefusal(%q) = nil, want %s", tc.msg, tc.kind)
			}
			if got.Kind != tc.kind || got.Status != tc.status || got.Message != tc.message {
				t.Errorf("ClassifyRefusal(%q) = %+v, want kind %s status %d message %q", tc.msg, *got, tc.kind, tc.status, tc.message)
			}
		})
	}
}

func TestRefusalReadsOnlyCodexChannels(t *testing.T) {
	const bad = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-x***y., url: http://127.0.0.1:1/v1/responses"
	tests := []struct {
		name string
		res  Result
		want RefusalKind
	}{
		{"turn.failed", Result{ExitCode: 1, Model: "gpt-5.5", Events: EventSummary{TurnFailed: bad}}, RefusedKey},
		{"stderr ERROR line", Result{ExitCode: 1, Stderr: "WARNING: proceeding\nERROR: " + bad + "\n"}, RefusedKey},
		{"succeeded", Result{ExitCode: 0, Events: EventSummary{TurnCompleted: true}, Stderr: "ERROR: " + bad}, ""},
		{"timed out", Result{ExitCode: -1, TimedOut: true, Events: EventSummary{TurnFailed: bad}}, ""},
		// The agent's words and command output never decide: a project whose tests print an
		// API error must not end the run as the API's refusal.
		{"agent message", Result{ExitCode: 1, FinalMessage: bad, Events: EventSummary{LastAgentMessage: bad}}, ""},
		{"failed command", Result{ExitCode: 1, Events: EventSummary{FailedCommands: []string{"curl api (exit 22): " + bad}}}, ""},
		{"tool error on stderr", Result{ExitCode: 1, Stderr: "ERROR codex_core::tools::router: error=" + bad}, ""},
		// An error item alone may be a warning or a retry Codex survived.
		{"error item only", Result{ExitCode: 1, Events: EventSummary{Errors: []string{"Model metadata for `fake-model` not found."}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Refusal(tc.res)
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("Refusal = %+v, want nil", got)
			case tc.want != "" && (got == nil || got.Kind != tc.want):
				t.Errorf("Refusal = %+v, want %s", got, tc.want)
			}
		})
	}
	if got := Refusal(tests[0].res); got == nil || got.Model != "gpt-5.5" || got.Error() != "the model API refused the call (HTTP 401): Incorrect API key provided: sk-x***y." {
		t.Errorf("Refusal = %+v (%v)", got, got)
	}
}

func TestRefusalErrorAndBound(t *testing.T) {
	for _, tc := range []struct {
		ref  APIRefusal
		want string
	}{
		{APIRefusal{Kind: RefusedModel, Message: "m"}, "the model API refused the call: m"},
		{APIRefusal{Kind: RefusedUnreachable, Status: 502, Message: "m"}, "the model API did not answer: m"}, // 502 is the proxy's
		{APIRefusal{Kind: RefusedServer, Message: "m"}, "the model API failed: m"},
	} {
		if got := tc.ref.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	long := ClassifyRefusal("unexpected status 401 Unauthorized: " + strings.Repeat("x", 5000))
	if long == nil || len([]rune(long.Message)) != maxRefusalMessage+1 || !strings.HasSuffix(long.Message, "…") {
		t.Errorf("a long message must be cut to %d characters and marked: %d", maxRefusalMessage, len(long.Message))
	}
}
