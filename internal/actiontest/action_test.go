package actiontest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"gopkg.in/yaml.v3"
)

type actionMeta struct {
	Inputs map[string]struct {
		Default  *string `yaml:"default"`
		Required bool    `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			If    string            `yaml:"if"`
			Uses  string            `yaml:"uses"`
			With  map[string]string `yaml:"with"`
			Run   string            `yaml:"run"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) (actionMeta, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var m actionMeta
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("action.yml does not parse: %v", err)
	}
	return m, string(data)
}

// The inputs (with their defaults) and outputs of the Docker action this composite action
// replaced: workflows written for it keep working.
var (
	wantInputs = map[string]string{
		"github-token": "${{ github.token }}", "app-id": "", "app-private-key": "", "openai-api-key": "", "codex-path": "codex", "codex-engine": "app-server",
		"trigger-phrase": "/studio", "label-prefix": "studio:", "branch-prefix": "studio/",
		"allowed-bots": "", "bot-login": "", "required-approvals": "", "org-defaults": "", "approval-ttl": "",
		"constrained-sandbox": "false", "timeout-minutes": "30", "max-fix-passes": "",
		"verify-command": "", "verify-timeout": "30s", "model-tier": "", "openai-base-url": "", "agent-user": "auto", "agent-sandbox": "auto",
		"agent-pid-namespace": "true", "agent-memory": "", "agent-pids": "", "model": "", "max-tokens": "", "max-minutes": "", "max-cost": "", "max-cost-per-day": "", "max-cost-per-month": "", "dispatch-workflow": "studio.yml",
		"network": "", "allow-hosts": "",
	}
	wantOutputs = []string{"status", "branch", "pull-request", "run-id", "evidence-dir", "usage"}
)

func TestActionKeepsEveryInputAndOutput(t *testing.T) {
	m, _ := readAction(t)
	for name, def := range wantInputs {
		in, ok := m.Inputs[name]
		if !ok {
			t.Errorf("input %s is gone", name)
			continue
		}
		got := ""
		if in.Default != nil {
			got = *in.Default
		}
		if got != def {
			t.Errorf("input %s: default %q, want %q", name, got, def)
		}
	}
	for name := range m.Inputs {
		if _, ok := wantInputs[name]; !ok {
			t.Errorf("new input %s: add it to wantInputs (and the README's table)", name)
		}
	}
	var outs []string
	for name := range m.Outputs {
		outs = append(outs, name)
	}
	slices.Sort(outs)
	want := slices.Clone(wantOutputs)
	slices.Sort(want)
	if !slices.Equal(outs, want) {
		t.Errorf("outputs %v, want %v", outs, want)
	}
}

var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// The composite steps: every input reaches the studio under the name the Docker action gave it
// (what go-githubactions' GetInput reads), every output comes from a step that exists, every
// expression names a declared input, and no expression is pasted into a script (an input's text
// would become shell code).
func TestActionIsACompositeThatPassesEveryInput(t *testing.T) {
	m, text := readAction(t)
	if m.Runs.Using != "composite" {
		t.Fatalf("runs.using is %q, want composite", m.Runs.Using)
	}
	ids := map[string]bool{}
	var runEnv map[string]string
	for i, s := range m.Runs.Steps {
		if s.ID != "" {
			ids[s.ID] = true
		}
		if s.ID == "run" {
			runEnv = s.Env
		}
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d (%s): a composite run step needs a shell", i, s.ID)
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %d (%s) pastes an expression into its script; pass it through env: %s", i, s.ID, s.Run)
		}
		for _, script := range regexp.MustCompile(`\$STUDIO_ACTION_PATH/(scripts/[a-z-]+)`).FindAllStringSubmatch(s.Run, -1) {
			st, err := os.Stat(filepath.Join(root, script[1]))
			if err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("step %d runs %s, which is missing or not executable (%v)", i, script[1], err)
			}
		}
	}
	if runEnv == nil {
		t.Fatal("no step with id run")
	}
	for name := range m.Inputs {
		var key string
		act := githubactions.New(githubactions.WithGetenv(func(k string) string { key = k; return "" }))
		act.GetInput(name)
		if got, want := runEnv[key], "${{ inputs."+name+" }}"; got != want {
			t.Errorf("run step env %s = %q, want %q (the studio reads input %s from %s)", key, got, want, name, key)
		}
	}
	for name, out := range m.Outputs {
		if want := "${{ steps.run.outputs." + name + " }}"; out.Value != want {
			t.Errorf("output %s: value %q, want %q", name, out.Value, want)
		}
	}
	for _, e := range exprRE.FindAllStringSubmatch(text, -1) {
		// Only the contexts themselves: github.event.inputs.task is a dispatch's input, not the
		// action's.
		for _, ref := range regexp.MustCompile(`(?:^|[^.\w-])(inputs|steps)\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(e[1], -1) {
			switch ref[1] {
			case "inputs":
				if _, ok := m.Inputs[ref[2]]; !ok {
					t.Errorf("%s names input %s, which action.yml does not declare", e[0], ref[2])
				}
			case "steps":
				if !ids[ref[2]] {
					t.Errorf("%s names step %s, which does not exist", e[0], ref[2])
				}
			}
		}
	}
}

// install-studio reads the release for a major tag (v1) from VERSION; the release workflow
// refuses a tag that differs from it.
func TestVersionFileIsASemver(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(data)); !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Errorf("VERSION %q is not MAJOR.MINOR.PATCH", v)
	}
}

// A source build is carried between jobs by the Actions cache only on GitHub-hosted runners, which
// start empty; elsewhere (self-hosted runners, act) RUNNER_TOOL_CACHE keeps it and the remote
// actions never run. The folder is restored before the install looks in it, and saved right
// after a build (not in a post step, so a failed run still leaves it for the next event).
func TestActionCachesTheSourceBuildOnlyOnHostedRunners(t *testing.T) {
	m, _ := readAction(t)
	at := map[string]int{}
	for i, s := range m.Runs.Steps {
		switch {
		case s.ID == "source-cache":
			at["key"] = i
			if s.If != "runner.environment == 'github-hosted'" || !strings.Contains(s.Run, "scripts/install-studio\" --source-cache-key") {
				t.Errorf("source-cache step: if %q, run %q", s.If, s.Run)
			}
			for _, name := range []string{"STUDIO_REF", "STUDIO_REPOSITORY", "STUDIO_ACTION_PATH"} {
				if want := stepEnv(m, "install")[name]; s.Env[name] != want {
					t.Errorf("source-cache step's %s = %q, not the install step's %q", name, s.Env[name], want)
				}
			}
		case strings.HasPrefix(s.Uses, "actions/cache/restore@"), strings.HasPrefix(s.Uses, "actions/cache/save@"):
			kind := strings.TrimPrefix(strings.Split(s.Uses, "@")[0], "actions/cache/")
			at[kind] = i
			want := "steps.source-cache.outputs.key != ''"
			if kind == "save" {
				want += " && steps.install.outputs.source-build == 'built'"
			}
			if s.If != want || s.With["key"] != "${{ steps.source-cache.outputs.key }}" || s.With["path"] != "${{ steps.source-cache.outputs.dir }}" {
				t.Errorf("cache %s step: if %q (want %q), with %v", kind, s.If, want, s.With)
			}
		case s.ID == "install":
			at["install"] = i
		case strings.HasPrefix(s.Uses, "actions/cache"):
			t.Errorf("step %d uses %s, which saves in a post step", i, s.Uses)
		}
	}
	order := []string{"key", "restore", "install", "save"}
	for i := 1; i < len(order); i++ {
		a, okA := at[order[i-1]]
		b, okB := at[order[i]]
		if !okA || !okB || a >= b {
			t.Errorf("steps %v: want %v in that order", at, order)
			break
		}
	}
}

func stepEnv(m actionMeta, id string) map[string]string {
	for _, s := range m.Runs.Steps {
		if s.ID == id {
			return s.Env
		}
	}
	return nil
}
