package guidance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/golden"
	"github.com/codex-studio/studio-action/prompts"
)

func readProfile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, name, got string) { t.Helper(); golden.Check(t, name, got) }

func TestCompileGolden(t *testing.T) {
	tests := []struct {
		profile string
		paths   []string
	}{
		{"hybrid.json", []string{"guidance/agents/builder.md", "guidance/agents/lead.md", "guidance/agents/scout.md", "guidance/agents/warden.md", SkillPath}},
		{"native.json", []string{"guidance/agents/helper.md", "guidance/agents/lead.md", SkillPath}},
		{"flat.json", []string{"guidance/agents/only.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			p, err := ParseProfile(readProfile(t, tt.profile))
			if err != nil {
				t.Fatal(err)
			}
			files := Compile(p)
			var paths []string
			for _, f := range files {
				paths = append(paths, f.Path)
				checkGolden(t, strings.TrimSuffix(tt.profile, ".json")+"/"+f.Path, f.Text)
			}
			if strings.Join(paths, ",") != strings.Join(tt.paths, ",") {
				t.Fatalf("paths = %v, want %v", paths, tt.paths)
			}
		})
	}
}

// TestCompileIsDeterministic re-encodes the profile with different key order and compiles
// several times: the bytes must not change.
func TestCompileIsDeterministic(t *testing.T) {
	raw := readProfile(t, "hybrid.json")
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	reencoded, err := json.Marshal(generic) // sorted keys, different from the file's order
	if err != nil {
		t.Fatal(err)
	}
	var first []File
	for i, data := range [][]byte{raw, reencoded, raw} {
		p, err := ParseProfile(data)
		if err != nil {
			t.Fatal(err)
		}
		got := Compile(p)
		if i == 0 {
			first = got
			continue
		}
		if len(got) != len(first) {
			t.Fatalf("run %d: %d files, want %d", i, len(got), len(first))
		}
		for j := range got {
			if got[j] != first[j] {
				t.Fatalf("run %d: %s differs", i, got[j].Path)
			}
		}
	}
}

func TestCompileFacts(t *testing.T) {
	p, err := ParseProfile(readProfile(t, "hybrid.json"))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, f := range Compile(p) {
		texts[f.Path] = f.Text
	}
	tests := []struct {
		path, want string
		present    bool
	}{
		{"guidance/agents/lead.md", "the root integration authority", true},
		{"guidance/agents/lead.md", "logical hash `0123456789abcdef`", true},
		{"guidance/agents/lead.md", "a token budget of 200000 tokens for each writing\ncall where the action runs Codex as an app server", true},
		{"guidance/agents/lead.md", "seconds of silence", false},
		{"guidance/agents/lead.md", "ceiling", false},
		{"guidance/agents/lead.md", "## Delegation checkpoint", true},
		{"guidance/agents/lead.md", "## Native subagents", false},
		{"guidance/agents/lead.md", "The action has no native path", true},
		{"guidance/agents/lead.md", "Child result visibility", false},
		{"guidance/agents/lead.md", "## Child tasks on GitHub", true},
		{"guidance/agents/lead.md", "- `builder` via mcp, as a child task: Writes code | tests", true},
		{"guidance/agents/lead.md", "- `scout` via native, which the action cannot run (no native path): profile participant", true},
		{"guidance/agents/lead.md", "## Profile instructions for this role\n\nKeep the release branch green.\n", true},
		{"guidance/agents/lead.md", "Stay inside the delegated objective", false},
		{"guidance/agents/builder.md", "a delegated participant", true},
		{"guidance/agents/builder.md", "true leaf participant", true},
		{"guidance/agents/builder.md", "adversarial input for the root", true},
		{"guidance/agents/builder.md", "Execution: one Codex turn for each writing call.", true},
		{"guidance/agents/scout.md", "## Low-trust boundary", true},
		{"guidance/agents/warden.md", "on the issue of a child task another\nrole of the profile admitted", true},
		{"guidance/agents/warden.md", "- over `builder`: `steer`, `pause`, `stop`", true},
		{"guidance/agents/warden.md", "/studio steer", true},
		{SkillPath, "sub-issue", true},
		{"guidance/agents/warden.md", "## Child tasks on GitHub", false},
		{"guidance/agents/warden.md", "## Controls", true},
		{"guidance/agents/warden.md", "## Delegation checkpoint", false},
		{SkillPath, "name: mmo-profile-orchestration", true},
		{SkillPath, "## Child-task lifecycle", true},
		{SkillPath, "- `warden` -> `builder`: `steer`, `pause`, `stop`", true},
		{SkillPath, "| `builder` | mcp | implement, fix | workspace-write | medium/root_adjudication | none |", true},
		{SkillPath, "| `lead` | root | root-owned | workspace-write | high/self | builder, scout |", true},
		{SkillPath, "- The profile's native thread limit (3) does not apply: the action has no native path", true},
		{SkillPath, "at most 4 runs at once, the root run included", true},
		{SkillPath, "- Contradictions are settled by `root_adjudication`.", true},
	}
	for _, tt := range tests {
		if got := strings.Contains(texts[tt.path], tt.want); got != tt.present {
			t.Errorf("%s contains %q = %v, want %v", tt.path, tt.want, got, tt.present)
		}
	}
}

func TestInvalidProfileNamesTheKey(t *testing.T) {
	base := readProfile(t, "hybrid.json")
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		key    string
	}{
		{"missing profile", func(m map[string]any) { delete(m, "profile") }, "profile: is missing"},
		{"missing root", func(m map[string]any) { delete(m["profile"].(map[string]any), "root") }, "profile.root"},
		{"unknown root", func(m map[string]any) { m["profile"].(map[string]any)["root"] = "ghost" }, "profile.root: names unknown agent"},
		{"missing hash", func(m map[string]any) { delete(m, "logical_hash") }, "logical_hash"},
		{"unknown model", func(m map[string]any) { agent(m, "scout")["model"] = "gpt-9" }, "agents.scout.model: names unknown model"},
		{"unknown route", func(m map[string]any) { m["models"].(map[string]any)["luna"].(map[string]any)["route"] = "nowhere" }, "models.luna.route"},
		{"unknown child", func(m map[string]any) { agent(m, "lead")["can_spawn"] = []any{"ghost"} }, "agents.lead.can_spawn[0]"},
		{"unknown control target", func(m map[string]any) {
			agent(m, "warden")["controls"] = map[string]any{"ghost": map[string]any{"actions": []any{}}}
		}, "agents.warden.controls.ghost"},
		{"control without actions", func(m map[string]any) { agent(m, "warden")["controls"] = map[string]any{"builder": map[string]any{}} }, "agents.warden.controls.builder.actions"},
		{"cycle", func(m map[string]any) { agent(m, "builder")["can_spawn"] = []any{"lead"} }, "forms a cycle"},
		{"goal budget", func(m map[string]any) { delete(agent(m, "lead"), "goal_token_budget") }, "agents.lead.goal_token_budget"},
		{"execution mode", func(m map[string]any) { agent(m, "lead")["execution_mode"] = "forever" }, "agents.lead.execution_mode"},
		{"orchestration", func(m map[string]any) { m["coordination"].(map[string]any)["orchestration"] = "carrier-pigeon" }, "coordination.orchestration"},
		{"native threads", func(m map[string]any) { delete(m["coordination"].(map[string]any), "native_max_concurrent_threads") }, "coordination.native_max_concurrent_threads"},
		{"trust type", func(m map[string]any) { agent(m, "scout")["trust"] = 3 }, "agents.scout.trust: must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(base, &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			data, _ := json.Marshal(m)
			_, err := ParseProfile(data)
			if err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("err = %v, want key %q", err, tt.key)
			}
		})
	}
	if _, err := ParseProfile([]byte("[]")); err == nil {
		t.Error("non-object accepted")
	}
}

func agent(m map[string]any, id string) map[string]any {
	return m["agents"].(map[string]any)[id].(map[string]any)
}

// The output tree is always named guidance/: an --out that already names it (the README's
// `--out guidance`) is that tree, not its parent, so nothing lands in guidance/guidance/.
func TestCompileFileIntoADirectoryNamedGuidance(t *testing.T) {
	for _, out := range []string{"guidance", "guidance/", "guidance/."} {
		t.Run(out, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, filepath.FromSlash(out))
			written, err := CompileFile(context.Background(), filepath.Join("testdata", "hybrid.json"), dir)
			if err != nil || len(written) != 5 {
				t.Fatalf("written = %v, err = %v", written, err)
			}
			want := filepath.Join(parent, filepath.FromSlash(AgentPath("lead")))
			if !slices.Contains(written, want) {
				t.Errorf("written = %v, want %s among them", written, want)
			}
			if _, err := os.Stat(filepath.Join(parent, "guidance", "guidance")); !os.IsNotExist(err) {
				t.Errorf("guidance/guidance exists (%v)", err)
			}
		})
	}
}

func TestCompileFileAndInstallForRole(t *testing.T) {
	out := t.TempDir()
	stale := filepath.Join(out, "guidance", "agents", "removed.md")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := CompileFile(context.Background(), filepath.Join("testdata", "hybrid.json"), out)
	if err != nil || len(written) != 5 {
		t.Fatalf("written = %v, err = %v", written, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale guidance file kept")
	}

	dir := t.TempDir()
	inst, ok, err := InstallForRole(context.Background(), readProfile(t, "hybrid.json"), "lead", dir, RunModel{})
	if err != nil || !ok || inst.SkillFile == "" {
		t.Fatalf("lead: %+v %v %v", inst, ok, err)
	}
	leaf, ok, err := InstallForRole(context.Background(), readProfile(t, "hybrid.json"), "builder", t.TempDir(), RunModel{})
	if err != nil || !ok || leaf.SkillFile != "" {
		t.Fatalf("builder: %+v %v %v", leaf, ok, err)
	}
	if _, ok, err := InstallForRole(context.Background(), readProfile(t, "hybrid.json"), "producer", t.TempDir(), RunModel{}); ok || err != nil {
		t.Fatalf("absent role: ok=%v err=%v", ok, err)
	}
	if _, _, err := InstallForRole(context.Background(), []byte(`{}`), "lead", t.TempDir(), RunModel{}); err == nil {
		t.Fatal("invalid profile accepted")
	}
	bad := []byte(strings.Replace(string(readProfile(t, "flat.json")), `"only"`, `"../escape"`, 2))
	if _, _, err := InstallForRole(context.Background(), bad, "../escape", t.TempDir(), RunModel{}); err == nil {
		t.Fatal("path escape accepted")
	}
}

// TestGuidancePromisesOnlyExistingVerbs compiles every test profile: the guidance may name only
// the /studio commands the action has, and no sub-issues, which the action does not file.
func TestGuidancePromisesOnlyExistingVerbs(t *testing.T) {
	for _, name := range []string{"hybrid.json", "native.json", "flat.json"} {
		p, err := ParseProfile(readProfile(t, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Compile(p) {
			if bad := prompts.UnknownVerbs(f.Text); len(bad) > 0 {
				t.Errorf("%s %s mentions /studio %v, which the action does not have (it has %v)", name, f.Path, bad, prompts.Verbs)
			}
			// Sub-issues are filed only for a durable orchestration (mcp, hybrid): a native-only
			// profile must not promise them.
			if p.Coordination.Orchestration == "native" && strings.Contains(strings.ToLower(f.Text), "sub-issue") {
				t.Errorf("%s %s promises sub-issues, which the action does not file under native orchestration", name, f.Path)
			}
		}
	}
}
