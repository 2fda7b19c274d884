package policy

import (
	"strings"
	"testing"
)

func TestTaskAllowHostsAreCheckedEntries(t *testing.T) {
	task, err := ParseTask("x\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [a.gd]\nallowHosts: [pkg.example.com, \"127.0.0.1:4873\"]\n```\n")
	if err != nil || strings.Join(task.AllowHosts, ",") != "pkg.example.com,127.0.0.1:4873" {
		t.Fatalf("task %+v, %v", task.AllowHosts, err)
	}
	_, err = ParseTask("x\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [a.gd]\nallowHosts: [\"https://evil.example/x\"]\n```\n")
	var te *TaskError
	if err == nil || !strings.Contains(err.Error(), "not a URL") || !asTaskError(err, &te) || te.Field != "allowHosts" || te.Line != 6 {
		t.Fatalf("a URL as a host: %v", err)
	}
}

func asTaskError(err error, te **TaskError) bool {
	e, ok := err.(*TaskError)
	*te = e
	return ok
}

func TestStudioConfigNetwork(t *testing.T) {
	base := `{"mode":"prototype","studioMode":"guided-studio",`
	cfg, err := ParseStudioConfig([]byte(base + `"network":{"mode":"model-only","allowHosts":["pkg.example.com"],"recommended":false}}`))
	if err != nil || cfg.Network.Mode != "model-only" || cfg.Network.RecommendedOn() || cfg.Network.AllowHosts[0] != "pkg.example.com" {
		t.Fatalf("%+v %v", cfg.Network, err)
	}
	if cfg, _ := ParseStudioConfig([]byte(base + `"name":"x"}`)); !cfg.Network.RecommendedOn() {
		t.Error("the recommended hosts are on unless turned off")
	}
	for body, want := range map[string]string{
		`"network":{"mode":"closed"}}`:      "network.mode",
		`"network":{"allowHosts":["*"]}}`:   "network.allowHosts",
		`"network":{"allowHosts":"a.com"}}`: "network.allowHosts must be a list ([...]), not a string",
	} {
		if _, err := ParseStudioConfig([]byte(base + body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", body, err, want)
		}
	}
}
