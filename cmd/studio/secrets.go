package main

import (
	"strings"

	"github.com/codex-studio/studio-action/policy/secretenv"
)

// Secrets out of the environment.
//
// The runner hands the action its secrets as environment variables, and the kernel keeps a
// process's initial environment block readable at /proc/<pid>/environ for its whole life:
// os.Unsetenv changes only Go's copy. The Codex agent runs as the same user and, with the
// danger-full-access sandbox, can read its parent's environ. So in action mode main calls
// hideSecrets before anything else: on Linux and macOS it moves every secret-bearing variable
// into a pipe and re-executes the same binary with an environment that lacks them (see
// secrets_unix.go);
// the action then reads them through the getenv that run already takes.

// secretsFDVar carries the pipe's read end into the re-executed process. Its presence is also the
// guard against a second re-exec.
const secretsFDVar = "STUDIO_SECRETS_FD"

// maxSecretsBytes bounds the JSON handed over: it is written before exec and nobody reads it until
// after, so it must fit a pipe's default buffer (64 KiB on Linux).
const maxSecretsBytes = 64 << 10

// isSecretName reports whether the variable name may hold a secret: the rule of
// policy/secretenv (shared with the verification's environment, bot/codex.VerifyEnv), except
// for secretsFDVar.
func isSecretName(name string) bool {
	if strings.ToUpper(name) == secretsFDVar { // a descriptor number, and the re-exec's guard: it must stay visible
		return false
	}
	return secretenv.IsSecretName(name)
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
