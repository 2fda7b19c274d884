package bot

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/internal/sandbox"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// TestWorkflowCarriesItsModel: a task with a workflowId runs on the workflow's model and effort
// (seed §10.1), whether it came from `/studio workflow`, a recipe step or a task block; a custom
// workflow's modelTier is its model; the task's and the input's tiers still win over it, keeping
// the workflow's effort; a task without a workflow keeps its role's route.
func TestWorkflowCarriesItsModel(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		prompts.CustomizationPath:     `{"schemaVersion": 1, "workflows": [{"id": "night-audit", "role": "qa-playtester", "phase": "review", "file": ".codex/workflows/night-audit.md", "objective": "Audit the night build.", "modelTier": "luna"}]}`,
		".codex/agents/producer.toml": "model = \"gpt-5.6-sol\"\nmodel_reasoning_effort = \"high\"\n",
	}
	rs, err := roles.Load(mapFiles(files))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		task          policy.Task
		in            roles.RouteInputs
		model, effort string
	}{
		{"sprint-status", policy.Task{Role: "producer", WorkflowID: "sprint-status"}, roles.RouteInputs{}, "gpt-5.6-luna", "low"},
		{"vertical-slice", policy.Task{Role: "producer", WorkflowID: "vertical-slice"}, roles.RouteInputs{}, "gpt-5.6-sol", "high"},
		{"release-checklist", policy.Task{Role: "release-manager", WorkflowID: "release-checklist"}, roles.RouteInputs{}, "gpt-5.6-sol", "high"},
		{"security-audit", policy.Task{Role: "security-engineer", WorkflowID: "security-audit"}, roles.RouteInputs{}, "gpt-5.6-sol", "high"},
		{"bugfix", policy.Task{Role: "gameplay-programmer", WorkflowID: "bugfix"}, roles.RouteInputs{}, "gpt-5.6-terra", "high"},
		{"no workflow: the role's", policy.Task{Role: "producer"}, roles.RouteInputs{}, "gpt-5.6-sol", "high"},
		{"custom workflow's modelTier", policy.Task{Role: "qa-playtester", WorkflowID: "night-audit"}, roles.RouteInputs{}, "gpt-5.6-luna", "low"},
		{"the task's tier keeps the workflow's effort", policy.Task{Role: "producer", WorkflowID: "sprint-status", RunPolicy: policy.RunPolicy{ModelTier: "terra"}}, roles.RouteInputs{}, "gpt-5.6-terra", "low"},
		{"the input's tier wins", policy.Task{Role: "producer", WorkflowID: "sprint-status", RunPolicy: policy.RunPolicy{ModelTier: "terra"}}, roles.RouteInputs{ModelTier: "sol"}, "gpt-5.6-sol", "low"},
		{"the task's tier, no workflow", policy.Task{Role: "producer", RunPolicy: policy.RunPolicy{ModelTier: "luna"}}, roles.RouteInputs{}, "gpt-5.6-luna", "high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := rs.RouteForTask(tt.task, mapFiles(files), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := plan.Implementation.Primary; got.Model != tt.model || got.Effort != tt.effort {
				t.Errorf("route = %s/%s, want %s/%s", got.Model, got.Effort, tt.model, tt.effort)
			}
		})
	}
}

func mapFiles(files map[string]string) func(path string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if s, ok := files[path]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

// A task block's runPolicy.constrainedSandbox runs its writing call in Codex's workspace-write
// sandbox, as the action's constrained-sandbox input does; without either it is full access.
func TestTaskConstrainedSandboxReachesCodex(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		block, want string
	}{
		{"runPolicy: {constrainedSandbox: true}\n", "workspace-write"},
		{"", "danger-full-access"},
	} {
		w := newHWorld(t, nil)
		n := w.issue("Snappier jump", strings.Replace(hTask, "files: [design/gdd.md]\n", "files: [design/gdd.md]\n"+tt.block, 1))
		agent := w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
		w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
		writes, _ := agent.requests()
		if len(writes) == 0 || writes[0].Sandbox != tt.want {
			t.Errorf("block %q: writing calls %+v, want sandbox %s", tt.block, writes, tt.want)
		}
	}
}
