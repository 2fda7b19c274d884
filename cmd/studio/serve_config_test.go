package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The server's configuration is read and checked in one place; each missing or conflicting
// variable is named with what to set.
func TestServeConfigNamesWhatToSet(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	full := map[string]string{"STUDIO_APP_ID": "1", "STUDIO_APP_PRIVATE_KEY": "PEM", "STUDIO_WEBHOOK_SECRET": "s"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range full {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(serveConfig) bool
	}{
		{"defaults", full, "", func(c serveConfig) bool {
			return c.listen == ":8080" && c.apiURL == "https://api.github.com" && c.serverURL == "https://github.com" &&
				c.dispatchWorkflow == "studio.yml" && c.maxInFlight == defaultMaxInFlight && len(c.secrets) == 1
		}},
		{"nothing set", map[string]string{}, "STUDIO_APP_ID is empty", nil},
		{"no key", with("STUDIO_APP_PRIVATE_KEY", ""), "STUDIO_APP_PRIVATE_KEY (the PEM) or STUDIO_APP_PRIVATE_KEY_FILE", nil},
		{"no secret", with("STUDIO_WEBHOOK_SECRET", ""), "STUDIO_WEBHOOK_SECRET is empty", nil},
		{"both keys", with("STUDIO_APP_PRIVATE_KEY_FILE", keyFile), "both STUDIO_APP_PRIVATE_KEY and STUDIO_APP_PRIVATE_KEY_FILE", nil},
		{"key file", with("STUDIO_APP_PRIVATE_KEY", "", "STUDIO_APP_PRIVATE_KEY_FILE", keyFile), "", func(c serveConfig) bool {
			return strings.Contains(c.privateKey, "BEGIN RSA PRIVATE KEY")
		}},
		{"missing key file", with("STUDIO_APP_PRIVATE_KEY", "", "STUDIO_APP_PRIVATE_KEY_FILE", keyFile+".absent"), "STUDIO_APP_PRIVATE_KEY_FILE: open", nil},
		{"rotation", with("STUDIO_WEBHOOK_SECRET_PREVIOUS", "old"), "", func(c serveConfig) bool {
			return len(c.secrets) == 2 && string(c.secrets[0]) == "s" && string(c.secrets[1]) == "old"
		}},
		{"enterprise", with("GITHUB_API_URL", "https://ghe.example/api/v3", "GITHUB_SERVER_URL", "https://ghe.example", "STUDIO_DISPATCH_WORKFLOW", "bot.yml"), "", func(c serveConfig) bool {
			return c.apiURL == "https://ghe.example/api/v3" && c.serverURL == "https://ghe.example" && c.dispatchWorkflow == "bot.yml"
		}},
		{"bad bound", with("STUDIO_SERVE_MAX_IN_FLIGHT", "0"), `STUDIO_SERVE_MAX_IN_FLIGHT="0" is not a positive number`, nil},
		{"bound", with("STUDIO_SERVE_MAX_IN_FLIGHT", "8"), "", func(c serveConfig) bool { return c.maxInFlight == 8 }},
	} {
		c, err := serveConfigOf(func(k string) string { return tc.env[k] }, "")
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.check != nil && !tc.check(c):
			t.Errorf("%s: config %+v", tc.name, c)
		}
	}
}
