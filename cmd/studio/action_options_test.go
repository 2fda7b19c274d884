package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/jail"
)

// actionTestEnv is a runner's environment with a token and nothing else set.
func actionTestEnv(over map[string]string) func(string) string {
	env := map[string]string{
		"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": "/runner/event.json", "GITHUB_REPOSITORY": "acme/hop",
		"GITHUB_WORKSPACE": "/runner/work/hop/hop", "RUNNER_TEMP": "/runner/temp", "GITHUB_RUN_ID": "4242",
		"INPUT_GITHUB-TOKEN": "ghs_token",
	}
	for k, v := range over {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return func(k string) string { return env[k] }
}

func intp(n int) *int { return &n }

// Every input: its default, a valid value, and a bad one with the error that names it.
func TestParseActionOptions(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		get     func(actionOptions) any
		want    any
		wantErr string
	}{
		// The runner's environment.
		{name: "runner environment", get: func(o actionOptions) any { return o.env },
			want: actionEnv{eventName: "issue_comment", eventPath: "/runner/event.json", repository: "acme/hop", apiURL: "https://api.github.com", serverURL: "https://github.com",
				workspace: "/runner/work/hop/hop", runID: "4242", runnerTemp: "/runner/temp"}},
		{name: "enterprise URLs", env: map[string]string{"GITHUB_API_URL": "https://ghe.example/api/v3", "GITHUB_SERVER_URL": "https://ghe.example"},
			get: func(o actionOptions) any { return o.env.apiURL + " " + o.env.serverURL }, want: "https://ghe.example/api/v3 https://ghe.example"},
		{name: "outside Actions", env: map[string]string{"GITHUB_EVENT_NAME": "", "RUNNER_TEMP": ""},
			wantErr: "not running inside GitHub Actions: GITHUB_EVENT_NAME, RUNNER_TEMP unset"},
		{name: "repository not owner/name", env: map[string]string{"GITHUB_REPOSITORY": "hop"}, wantErr: `GITHUB_REPOSITORY "hop" is not owner/name`},
		{name: "run attempt default", get: func(o actionOptions) any { return o.locks.RunAttempt }, want: "1"},
		{name: "run attempt", env: map[string]string{"GITHUB_RUN_ATTEMPT": "3"}, get: func(o actionOptions) any { return o.locks.RunAttempt }, want: "3"},

		// Credentials.
		{name: "github-token", get: func(o actionOptions) any { return o.token }, want: "ghs_token"},
		{name: "github-token empty", env: map[string]string{"INPUT_GITHUB-TOKEN": ""}, wantErr: "the github-token input is empty; pass `github-token: ${{ secrets.GITHUB_TOKEN }}`, or app-id and app-private-key"},
		{name: "app instead of a token", env: map[string]string{"INPUT_GITHUB-TOKEN": "", "INPUT_APP-ID": " 914 ", "INPUT_APP-PRIVATE-KEY": "KEY"},
			get: func(o actionOptions) any { return o.app }, want: appInputs{id: "914", key: "KEY"}},
		{name: "app-id alone", env: map[string]string{"INPUT_APP-ID": "914"}, wantErr: "app-id is set but app-private-key is empty"},
		{name: "app-private-key alone", env: map[string]string{"INPUT_APP-PRIVATE-KEY": "KEY"}, wantErr: "app-private-key is set but app-id is empty"},
		{name: "openai-api-key default", get: func(o actionOptions) any { return o.openAIKey }, want: ""},
		{name: "openai-api-key", env: map[string]string{"INPUT_OPENAI-API-KEY": " sk-x "}, get: func(o actionOptions) any { return o.openAIKey }, want: "sk-x"},
		{name: "bot-login default", get: func(o actionOptions) any { return o.botLogin }, want: ""},
		{name: "bot-login", env: map[string]string{"INPUT_BOT-LOGIN": " studio[bot] "}, get: func(o actionOptions) any { return o.botLogin }, want: "studio[bot]"},
		{name: "allowed-bots default", get: func(o actionOptions) any { return o.allowedBots }, want: []string(nil)},
		{name: "allowed-bots", env: map[string]string{"INPUT_ALLOWED-BOTS": "renovate[bot], dependabot[bot]\nmybot[bot]"},
			get: func(o actionOptions) any { return o.allowedBots }, want: []string{"renovate[bot]", "dependabot[bot]", "mybot[bot]"}},
		{name: "allowed-bots pattern is dropped with a warning", env: map[string]string{"INPUT_ALLOWED-BOTS": "*, renovate[bot]"},
			get:  func(o actionOptions) any { return [][]string{o.allowedBots, o.warnings} },
			want: [][]string{{"renovate[bot]"}, {"allowed-bots does not accept * (or any pattern); list each bot login, e.g. renovate[bot]"}}},

		// Codex.
		{name: "codex-path default", get: func(o actionOptions) any { return o.codexPath }, want: ""},
		{name: "codex-path", env: map[string]string{"INPUT_CODEX-PATH": "/opt/codex"}, get: func(o actionOptions) any { return o.codexPath }, want: "/opt/codex"},
		{name: "codex-engine default", get: func(o actionOptions) any { return o.codexEngine }, want: codex.EngineAppServer},
		{name: "codex-engine", env: map[string]string{"INPUT_CODEX-ENGINE": " exec "}, get: func(o actionOptions) any { return o.codexEngine }, want: codex.EngineExec},
		{name: "codex-engine unknown", env: map[string]string{"INPUT_CODEX-ENGINE": "daemon"}, wantErr: `codex-engine: unknown Codex engine "daemon": use "app-server" or "exec"`},
		{name: "openai-base-url default", get: func(o actionOptions) any { return o.openAIBaseURL }, want: ""},
		{name: "openai-base-url", env: map[string]string{"INPUT_OPENAI-BASE-URL": "https://llm.example/v1"}, get: func(o actionOptions) any { return o.openAIBaseURL }, want: "https://llm.example/v1"},
		{name: "timeout-minutes default", get: func(o actionOptions) any { return o.timeout }, want: 30 * time.Minute},
		{name: "timeout-minutes fraction", env: map[string]string{"INPUT_TIMEOUT-MINUTES": "0.5"}, get: func(o actionOptions) any { return o.timeout }, want: 30 * time.Second},
		{name: "timeout-minutes zero", env: map[string]string{"INPUT_TIMEOUT-MINUTES": "0"}, wantErr: `timeout-minutes "0" must be a number of minutes above 0`},
		{name: "timeout-minutes words", env: map[string]string{"INPUT_TIMEOUT-MINUTES": "half an hour"}, wantErr: `timeout-minutes "half an hour" must be a number of minutes above 0`},
		{name: "timeout-minutes NaN", env: map[string]string{"INPUT_TIMEOUT-MINUTES": "NaN"}, wantErr: `timeout-minutes "NaN" must be a number of minutes above 0`},
		{name: "timeout-minutes beyond a duration", env: map[string]string{"INPUT_TIMEOUT-MINUTES": "1e300"}, wantErr: `timeout-minutes "1e300" must be a number of minutes above 0`},
		{name: "max-fix-passes default", get: func(o actionOptions) any { return o.maxFixPasses }, want: (*int)(nil)},
		{name: "max-fix-passes", env: map[string]string{"INPUT_MAX-FIX-PASSES": "0"}, get: func(o actionOptions) any { return o.maxFixPasses }, want: intp(0)},
		{name: "max-fix-passes negative", env: map[string]string{"INPUT_MAX-FIX-PASSES": "-1"}, wantErr: fmt.Sprintf(`max-fix-passes "-1" must be a whole number from 0 to %d`, bot.MaxFixPassesCap)},
		{name: "verify-command default", get: func(o actionOptions) any { return o.verifyCommand }, want: []string{}},
		{name: "verify-command", env: map[string]string{"INPUT_VERIFY-COMMAND": "go test  ./..."}, get: func(o actionOptions) any { return o.verifyCommand }, want: []string{"go", "test", "./..."}},
		{name: "verify-timeout default", get: func(o actionOptions) any { return o.verifyTimeout }, want: codex.DefaultVerifyTimeout},
		{name: "verify-timeout", env: map[string]string{"INPUT_VERIFY-TIMEOUT": "90s"}, get: func(o actionOptions) any { return o.verifyTimeout }, want: 90 * time.Second},
		{name: "verify-timeout too long", env: map[string]string{"INPUT_VERIFY-TIMEOUT": "3h"}, wantErr: `verify-timeout "3h" must be above 0 and at most 2h`},
		{name: "model inputs default", get: func(o actionOptions) any { return o.models }, want: modelSettings{}},
		{name: "model inputs", env: map[string]string{"INPUT_MODEL": "acme-coder-2", "INPUT_MODEL-TIER": "sol", "INPUT_MAX-TOKENS": "2000000"},
			get: func(o actionOptions) any { return o.models }, want: modelSettings{model: "acme-coder-2", tier: "sol", maxTokens: 2000000}},
		{name: "model with a space", env: map[string]string{"INPUT_MODEL": "gpt 5"}, wantErr: `the model input "gpt 5" must not contain whitespace or control characters`},
		{name: "model-tier unknown", env: map[string]string{"INPUT_MODEL-TIER": "mars"}, wantErr: `model-tier "mars" must be sol, terra or luna`},
		{name: "max-tokens zero", env: map[string]string{"INPUT_MAX-TOKENS": "0"}, wantErr: `max-tokens "0" must be a whole number of tokens above 0`},

		// The bot's names.
		{name: "names default", get: func(o actionOptions) any {
			return []string{o.triggerPhrase, o.labelPrefix, o.branchPrefix, o.dispatchWorkflow}
		}, want: []string{"/studio", "studio:", "studio/", "studio.yml"}},
		{name: "names", env: map[string]string{"INPUT_TRIGGER-PHRASE": "/bot", "INPUT_LABEL-PREFIX": "bot:", "INPUT_BRANCH-PREFIX": "bot/", "INPUT_DISPATCH-WORKFLOW": "bot.yml"},
			get: func(o actionOptions) any {
				return []string{o.triggerPhrase, o.labelPrefix, o.branchPrefix, o.dispatchWorkflow}
			},
			want: []string{"/bot", "bot:", "bot/", "bot.yml"}},

		// Approvals.
		{name: "approvals default", get: func(o actionOptions) any { return o.approvals }, want: approvalSettings{}},
		{name: "approvals", env: map[string]string{"INPUT_REQUIRED-APPROVALS": "2", "INPUT_APPROVAL-TTL": "72h"},
			get: func(o actionOptions) any { return o.approvals }, want: approvalSettings{required: 2, ttl: 72 * time.Hour}},
		{name: "required-approvals zero", env: map[string]string{"INPUT_REQUIRED-APPROVALS": "0"}, wantErr: `required-approvals "0" must be a whole number of at least 1`},
		{name: "approval-ttl in words", env: map[string]string{"INPUT_APPROVAL-TTL": "3 days"}, wantErr: `approval-ttl "3 days" must be a positive duration such as 72h or 90m`},

		// The organisation's defaults.
		{name: "org-defaults default", get: func(o actionOptions) any { return []any{o.orgDefaults, o.orgDefaultsOff} }, want: []any{"acme/.github", false}},
		{name: "org-defaults", env: map[string]string{"INPUT_ORG-DEFAULTS": "acme/studio-policy"}, get: func(o actionOptions) any { return []any{o.orgDefaults, o.orgDefaultsOff} }, want: []any{"acme/studio-policy", false}},
		{name: "org-defaults none", env: map[string]string{"INPUT_ORG-DEFAULTS": "none"}, get: func(o actionOptions) any { return o.orgDefaultsOff }, want: true},
		{name: "org-defaults without an owner", env: map[string]string{"INPUT_ORG-DEFAULTS": "studio-policy"}, wantErr: `org-defaults "studio-policy" must be owner/name (a repository), or none`},

		// Containment.
		{name: "constrained-sandbox default", get: func(o actionOptions) any { return o.constrainedSandbox }, want: false},
		{name: "constrained-sandbox", env: map[string]string{"INPUT_CONSTRAINED-SANDBOX": "TRUE"}, get: func(o actionOptions) any { return o.constrainedSandbox }, want: true},
		{name: "jail default", get: func(o actionOptions) any { return o.jail },
			want: jailSetup{opts: jail.Options{Sandbox: jail.SandboxAuto, ProbePIDNamespace: true, Workspace: "/runner/work/hop/hop", Hide: []string{"/runner/temp"}}}},
		{name: "agent-user none", env: map[string]string{"INPUT_AGENT-USER": "None"}, get: func(o actionOptions) any { return o.jail }, want: jailSetup{none: true}},
		{name: "agent-user uid, sandbox off, no PID namespace", env: map[string]string{"INPUT_AGENT-USER": "2001", "INPUT_AGENT-SANDBOX": "off", "INPUT_AGENT-PID-NAMESPACE": "false"},
			get:  func(o actionOptions) any { return o.jail },
			want: jailSetup{opts: jail.Options{UID: 2001, Sandbox: jail.SandboxOff, Workspace: "/runner/work/hop/hop", Hide: []string{"/runner/temp"}}}},
		{name: "agent-user name", env: map[string]string{"INPUT_AGENT-USER": "studio-agent"}, get: func(o actionOptions) any { return o.jail.opts.User }, want: "studio-agent"},
		{name: "agent-user uid zero", env: map[string]string{"INPUT_AGENT-USER": "0"}, wantErr: `agent-user "0" must be auto, a user name, a uid above 0, or none`},
		{name: "agent-memory and agent-pids", env: map[string]string{"INPUT_AGENT-MEMORY": "512MiB", "INPUT_AGENT-PIDS": "200"},
			get: func(o actionOptions) any { return []int64{o.jail.opts.Memory, o.jail.opts.Processes} }, want: []int64{512 << 20, 200}},
		{name: "agent-memory in words", env: map[string]string{"INPUT_AGENT-MEMORY": "plenty"}, wantErr: `agent-memory "plenty" must be a size such as 4GiB or 512MiB`},
		{name: "agent-memory too small", env: map[string]string{"INPUT_AGENT-MEMORY": "16MiB"}, wantErr: `agent-memory "16MiB" is below 128 MiB`},
		{name: "agent-pids in words", env: map[string]string{"INPUT_AGENT-PIDS": "many"}, wantErr: `agent-pids "many" must be a number of processes`},
		{name: "agent-sandbox unknown", env: map[string]string{"INPUT_AGENT-SANDBOX": "maybe"}, wantErr: `agent-sandbox "maybe" must be auto, require or off`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseActionOptions(actionTestEnv(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one saying %q", err, tt.wantErr)
				}
				if n := len(eachError(err)); n != 1 {
					t.Errorf("%d errors for one bad input: %v", n, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.get(o); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// Several bad inputs are each reported, in the order of the inputs, so one run names them all;
// the secrets are still read, so they are masked before any error is printed.
func TestParseActionOptionsReportsEveryBadInput(t *testing.T) {
	o, err := parseActionOptions(actionTestEnv(map[string]string{
		"INPUT_OPENAI-API-KEY": "sk-secret", "INPUT_TIMEOUT-MINUTES": "0", "INPUT_REQUIRED-APPROVALS": "none", "INPUT_APPROVAL-TTL": "soon",
		"INPUT_MODEL-TIER": "mars", "INPUT_MAX-TOKENS": "lots", "INPUT_AGENT-USER": "-3",
	}))
	var got []string
	for _, e := range eachError(err) {
		got = append(got, strings.Fields(e.Error())[0])
	}
	want := []string{"timeout-minutes", "required-approvals", "approval-ttl", "model-tier", "max-tokens", "agent-user"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors name %q, want %q: %v", got, want, err)
	}
	if o.token != "ghs_token" || o.openAIKey != "sk-secret" {
		t.Errorf("the secrets were not read: %q, %q", o.token, o.openAIKey)
	}
}

// A bad input fails the step with one annotation each, the secrets masked first, and nothing read
// from GitHub (the event path does not even exist).
func TestBadInputsFailTheStepWithOneAnnotationEach(t *testing.T) {
	var stdout strings.Builder
	getenv := actionTestEnv(map[string]string{"INPUT_OPENAI-API-KEY": "sk-secret", "INPUT_TIMEOUT-MINUTES": "0", "INPUT_VERIFY-TIMEOUT": "3h", "INPUT_ALLOWED-BOTS": "*"})
	code := runActionWith(t.Context(), getenv, &stdout, &stdout, actionOverrides{})
	out := stdout.String()
	if code != exitError {
		t.Fatalf("exit %d, want %d:\n%s", code, exitError, out)
	}
	for _, want := range []string{
		"::add-mask::ghs_token", "::add-mask::sk-secret", "::warning::allowed-bots does not accept *",
		`::error::timeout-minutes "0" must be a number of minutes above 0`, `::error::verify-timeout "3h" must be above 0 and at most 2h`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "::add-mask::sk-secret") > strings.Index(out, "::error::") {
		t.Errorf("an error was printed before the key was masked:\n%s", out)
	}
	if strings.Contains(out, "event payload") {
		t.Errorf("the event was read although an input is bad:\n%s", out)
	}
}
