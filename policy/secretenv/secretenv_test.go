package secretenv

import "testing"

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"INPUT_GITHUB-TOKEN":           true,
		"OPENAI_API_KEY":               true,
		"deploy_password":              true,
		"ACTIONS_ID_TOKEN_REQUEST_URL": true,
		"ACTIONS_CACHE_URL":            true,
		"GOOGLE_CREDENTIALS":           true,
		"DB_PASSWD":                    true,
		"PATH":                         false,
		"JAVA_HOME":                    false,
		"GODOT_BIN":                    false,
		"UNITY_PATH":                   false,
		"DOTNET_ROOT":                  false,
		"RUNNER_TOOL_CACHE":            false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}
