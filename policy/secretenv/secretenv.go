// Package secretenv is the one rule for which environment variable names may hold a secret. The
// action moves such variables out of its own environment at start (cmd/studio, secrets.go), and
// the verification command's environment, built from the action's, leaves them out again
// (bot/codex.VerifyEnv). It imports nothing of the studio, so both sides can use it.
package secretenv

import "strings"

// Names are the runner's service endpoints, whose names carry none of Words. They hold no
// credential themselves but say where the runner's tokens are accepted, and no child of the
// action needs them.
var Names = map[string]bool{
	"ACTIONS_ID_TOKEN_REQUEST_URL": true,
	"ACTIONS_RUNTIME_URL":          true,
	"ACTIONS_CACHE_URL":            true,
	"ACTIONS_RESULTS_URL":          true,
}

// Words mark a secret-bearing name anywhere in it, case-insensitively. They are the patterns the
// agent's shell_environment_policy excludes (bot/codex), so one rule covers both sides; they
// include GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN and every input
// such as INPUT_GITHUB-TOKEN and INPUT_OPENAI-API-KEY. Matching generously costs little: names
// the action's children need (PATH, HOME, GITHUB_EVENT_PATH, JAVA_HOME, GIT_*, ...) carry none.
var Words = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"}

// IsSecretName reports whether the variable name may hold a secret.
func IsSecretName(name string) bool {
	up := strings.ToUpper(name)
	if Names[up] {
		return true
	}
	for _, w := range Words {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}
