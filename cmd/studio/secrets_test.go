package main

import (
	"slices"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"INPUT_GITHUB-TOKEN":             true,
		"INPUT_OPENAI-API-KEY":           true,
		"INPUT_APP-PRIVATE-KEY":          true,
		"INPUT_DEPLOY-PASSWORD":          true,
		"INPUT_CLIENT-SECRET":            true,
		"GITHUB_TOKEN":                   true,
		"github_token":                   true,
		"ACTIONS_RUNTIME_TOKEN":          true,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
		"ACTIONS_ID_TOKEN_REQUEST_URL":   true,
		"ACTIONS_CACHE_URL":              true,
		"ACTIONS_RESULTS_URL":            true,
		"OPENAI_API_KEY":                 true,
		"AWS_SECRET_ACCESS_KEY":          true,
		"GOOGLE_APPLICATION_CREDENTIALS": true,
		"GITHUB_EVENT_PATH":              false,
		"GITHUB_REPOSITORY":              false,
		"GITHUB_WORKSPACE":               false,
		"INPUT_CODEX-PATH":               false,
		"INPUT_TRIGGER-PHRASE":           false,
		"RUNNER_TEMP":                    false,
		"PATH":                           false,
		"HOME":                           false,
		"GITHUB_ACTIONS":                 false,
		secretsFDVar:                     false,
	} {
		if got := isSecretName(name); got != want {
			t.Errorf("isSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSplitEnv(t *testing.T) {
	t.Parallel()
	keep, secrets := splitEnv([]string{
		"PATH=/bin", "INPUT_GITHUB-TOKEN=ghs_1", "GITHUB_REPOSITORY=acme/hop",
		"INPUT_OPENAI-API-KEY=sk=with=equals", "GITHUB_TOKEN=first", "GITHUB_TOKEN=second", "GITHUB_TOKEN",
	})
	if want := []string{"PATH=/bin", "GITHUB_REPOSITORY=acme/hop"}; !slices.Equal(keep, want) {
		t.Errorf("keep = %q, want %q", keep, want)
	}
	want := map[string]string{"INPUT_GITHUB-TOKEN": "ghs_1", "INPUT_OPENAI-API-KEY": "sk=with=equals", "GITHUB_TOKEN": "first"}
	if len(secrets) != len(want) {
		t.Errorf("secrets = %q, want %q", secrets, want)
	}
	for k, v := range want {
		if secrets[k] != v {
			t.Errorf("secrets[%s] = %q, want %q", k, secrets[k], v)
		}
	}
}

func TestWithSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GITHUB_REPOSITORY": "acme/hop", "GITHUB_TOKEN": "stale"}
	getenv := withSecrets(map[string]string{"GITHUB_TOKEN": "handed-over"}, func(k string) string { return env[k] })
	if got := getenv("GITHUB_TOKEN"); got != "handed-over" {
		t.Errorf("GITHUB_TOKEN = %q, want the handed-over value first", got)
	}
	if got := getenv("GITHUB_REPOSITORY"); got != "acme/hop" {
		t.Errorf("GITHUB_REPOSITORY = %q, want the environment's", got)
	}
}

func TestActionMode(t *testing.T) {
	t.Parallel()
	inActions := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
	local := func(string) string { return "" }
	for _, c := range []struct {
		args   []string
		getenv func(string) string
		want   bool
	}{
		{nil, inActions, true},
		{nil, local, false},
		{[]string{"action"}, local, true},
		{[]string{"demo"}, inActions, false},
		{[]string{"version"}, inActions, false},
	} {
		if got := actionMode(c.args, c.getenv); got != c.want {
			t.Errorf("actionMode(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
