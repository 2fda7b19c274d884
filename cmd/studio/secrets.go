package main

import "strings"

// Secrets out of the environment.
//
// The runner hands the action its secrets as environment variables, and the kernel keeps a
// process's initial environment block readable at /proc/<pid>/environ for its whole life:
// os.Unsetenv changes only Go's copy. The Codex agent runs as the same user and, with the
// danger-full-access sandbox, can read its parent's environ. So in action mode main calls
// hideSecrets before anything else: on Linux it moves every secret-bearing variable into a pipe
// and re-executes the same binary with an environment that lacks them (see secrets_linux.go);
// the action then reads them through the getenv that run already takes.

// secretsFDVar carries the pipe's read end into the re-executed process. Its presence is also the
// guard against a second re-exec.
const secretsFDVar = "STUDIO_SECRETS_FD"

// maxSecretsBytes bounds the JSON handed over: it is written before exec and nobody reads it until
// after, so it must fit a pipe's default buffer (64 KiB on Linux).
const maxSecretsBytes = 64 << 10

// secretNames are the runner's service endpoints, whose names carry none of secretWords. They hold
// no credential themselves but say where the runner's tokens are accepted, and no child of the
// action needs them, so they are moved with the tokens.
var secretNames = map[string]bool{
	"ACTIONS_ID_TOKEN_REQUEST_URL": true,
	"ACTIONS_RUNTIME_URL":          true,
	"ACTIONS_CACHE_URL":            true,
	"ACTIONS_RESULTS_URL":          true,
}

// secretWords mark a secret-bearing name anywhere in it, case-insensitively. They are the
// patterns the agent's shell_environment_policy excludes (bot/codex), so one rule covers both
// sides; they include GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN and
// every input such as INPUT_GITHUB-TOKEN and INPUT_OPENAI-API-KEY. Matching generously costs
// nothing: a moved variable is still served to the action by getenv, only no child inherits it.
// Names the action's children need (PATH, HOME, GITHUB_EVENT_PATH, GIT_*, ...) carry none of them.
var secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"}

// isSecretName reports whether the variable name may hold a secret.
func isSecretName(name string) bool {
	up := strings.ToUpper(name)
	if up == secretsFDVar { // a descriptor number, and the re-exec's guard: it must stay visible
		return false
	}
	if secretNames[up] {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// splitEnv separates environ ("K=V" entries) into the entries to keep and the secret-bearing
// values by name. The first of duplicate names wins, as in os.Getenv; every duplicate is removed.
func splitEnv(environ []string) (keep []string, secrets map[string]string) {
	secrets = map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !isSecretName(k) {
			keep = append(keep, kv)
			continue
		}
		if _, dup := secrets[k]; !dup {
			secrets[k] = v
		}
	}
	return keep, secrets
}

// withSecrets serves the handed-over secrets first, then the real environment.
func withSecrets(secrets map[string]string, getenv func(string) string) func(string) string {
	return func(k string) string {
		if v, ok := secrets[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// actionMode reports whether args select the GitHub Action (as run dispatches them), the only
// mode that receives secrets from the runner.
func actionMode(args []string, getenv func(string) string) bool {
	if len(args) == 0 {
		return getenv("GITHUB_ACTIONS") == "true"
	}
	return args[0] == "action"
}
