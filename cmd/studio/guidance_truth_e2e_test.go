package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

// seedProfile is a resolved profile (seed-guidance §1) over studio roles: sol and terra bindings,
// the orchestration given, and the agents' own keys over a common default.
func seedProfile(t *testing.T, orchestration, root string, agents map[string]map[string]any) []byte {
	t.Helper()
	doc := map[string]any{
		"profile":      map[string]any{"id": "truth-" + orchestration, "root": root},
		"logical_hash": "fedcba9876543210fedcba9876543210",
		"routes":       map[string]any{"deep": map[string]any{"name": "Deep"}, "fast": map[string]any{"name": "Fast"}},
		"models": map[string]any{
			"sol":   map[string]any{"upstream_id": "gpt-5.6-sol", "route": "deep"},
			"terra": map[string]any{"upstream_id": "gpt-5.6-terra", "route": "fast"},
		},
		"coordination": map[string]any{"orchestration": orchestration, "max_active_agents": 4, "max_depth": 2, "max_active_writers": 2,
			"result_visibility": "parent-only", "native_max_concurrent_threads": 3, "contradiction_policy": "root_adjudication"},
	}
	all := map[string]any{}
	for id, keys := range agents {
		a := map[string]any{"model": "sol", "trust": "medium", "verification": "self", "permissions": "read-only",
			"execution_mode": "turn", "stall_warning_seconds": 120, "finalization_grace_seconds": 30}
		for k, v := range keys {
			a[k] = v
		}
		all[id] = a
	}
	doc["agents"] = all
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// policyFacts are the profile's facts as the action's decisions read them (bot.profileFacts).
func policyFacts(t *testing.T, p *guidance.Profile) policy.ProfileFacts {
	t.Helper()
	f := policy.ProfileFacts{Root: p.Root, Orchestration: p.Coordination.Orchestration, Agents: map[string]policy.AgentFacts{}, MaxDepth: 2, MaxActiveAgents: 4, MaxActiveWriters: 2}
	for id, a := range p.Agents {
		f.Agents[id] = policy.AgentFacts{CanSpawn: a.CanSpawn, Controls: a.Controls, Trust: a.Trust, Verification: a.Verification, Backends: a.Backends}
	}
	return f
}

var (
	guidanceModel  = regexp.MustCompile("(?m)^Model: `([^`]+)`")
	guidanceChild  = regexp.MustCompile("(?m)^- `([^`]+)` via [^,]*, (as a child task|which the action cannot run)")
	guidanceEdge   = regexp.MustCompile("(?m)^- over `([^`]+)`: (.*)$")
	offeredRoles   = regexp.MustCompile("`role` \\(one of ([^)]*)\\)")
	codeSpanInText = regexp.MustCompile("`([^`]+)`")
)

// TestGuidanceStatesTheRunsFacts runs a role of four profiles locally (mcp, native, hybrid with a
// native-only child, and a control-only role) and reads each fact the compiled guidance states
// from the run it describes (issue 35): the model line against the model Codex was started with,
// each child the guidance offers as a child task against the Delegation section the run asked for
// and policy's delegation decision, and each control it lists against policy's control decision,
// while a granted action no verb carries out is named as such.
func TestGuidanceStatesTheRunsFacts(t *testing.T) {
	worker := map[string]any{"backends": []any{"mcp"}, "permissions": "workspace-write"}
	tests := []struct {
		name, role, tier string
		profile          func(t *testing.T) []byte
		wantModel        string
		wantChildTasks   []string // the roles the run offers as child tasks
		wantNoPath       []string // children the guidance says the action cannot run
		wantEdges        int
	}{
		{name: "mcp", role: "producer", wantModel: "gpt-5.6-sol", wantChildTasks: []string{"gameplay-programmer"},
			profile: func(t *testing.T) []byte {
				return seedProfile(t, "mcp", "producer", map[string]map[string]any{
					"producer": {"can_spawn": []any{"gameplay-programmer"}}, "gameplay-programmer": worker})
			}},
		{name: "native", role: "producer", wantModel: "gpt-5.6-sol", wantNoPath: []string{"gameplay-programmer"},
			profile: func(t *testing.T) []byte {
				return seedProfile(t, "native", "producer", map[string]map[string]any{
					"producer": {"can_spawn": []any{"gameplay-programmer"}}, "gameplay-programmer": {"backends": []any{"native"}}})
			}},
		{name: "hybrid with a native-only child", role: "producer", wantModel: "gpt-5.6-sol",
			wantChildTasks: []string{"gameplay-programmer"}, wantNoPath: []string{"qa-playtester"},
			profile: func(t *testing.T) []byte {
				return seedProfile(t, "hybrid", "producer", map[string]map[string]any{
					"producer":            {"can_spawn": []any{"gameplay-programmer", "qa-playtester"}},
					"gameplay-programmer": worker, "qa-playtester": {"backends": []any{"native"}}})
			}},
		{name: "control-only role, a model tier chosen", role: "qa-playtester", tier: "luna", wantModel: "gpt-5.6-luna", wantEdges: 1,
			profile: func(t *testing.T) []byte {
				return seedProfile(t, "mcp", "producer", map[string]map[string]any{
					"producer": {"can_spawn": []any{"gameplay-programmer"}}, "gameplay-programmer": worker,
					"qa-playtester": {"backends": []any{"mcp"}, "controls": map[string]any{
						"gameplay-programmer": map[string]any{"actions": []any{"steer", "pause", "interrupt", "fork", "set_effort"}}}}})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, ctl := localCheckoutControl(t, fakecodex.Call{FinalMessage: "Report."})
			data := tt.profile(t)
			// The role file names terra; the profile binds sol: the binding is the role's model.
			for p, c := range map[string]string{".codex/profile.json": string(data), ".codex/agents/" + tt.role + ".toml": "model = \"gpt-5.6-terra\"\n"} {
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			git(t, dir, "add", "-A")
			git(t, dir, "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-qm", "profile")
			args := []string{"run", tt.role, "Plan the first milestone", "--project", dir}
			if tt.tier != "" {
				args = append(args, "--model-tier", tt.tier)
			}
			_, stdout, stderr := runCLI(args, nil)
			invs := ctl.Invocations()
			if len(invs) == 0 {
				t.Fatalf("Codex never ran\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			inv := invs[0]
			prompt := inv.Prompt
			if !strings.Contains(prompt, "# Multi-agent guidance") {
				t.Fatalf("the run's prompt has no guidance:\n%s", prompt)
			}
			// The model: the one Codex was started with, the one the guidance states.
			ran := ""
			if inv.Model != "" {
				ran = inv.Model
			}
			m := guidanceModel.FindStringSubmatch(prompt)
			if m == nil || m[1] != ran || ran != tt.wantModel {
				t.Errorf("Codex ran %q; the guidance states %v; want %q", ran, m, tt.wantModel)
			}

			p, err := guidance.ParseProfile(data)
			if err != nil {
				t.Fatal(err)
			}
			facts := policyFacts(t, p)
			// Delegation: what the guidance offers is what the run asks for and what policy admits.
			var childTasks, noPath []string
			for _, c := range guidanceChild.FindAllStringSubmatch(prompt, -1) {
				d := policy.DecideDelegation(policy.DelegationFacts{Parent: tt.role, Profile: facts,
					Requests:   []policy.DelegationRequest{{Role: c[1], Objective: "o", WriteFiles: []string{"src/x.gd"}}},
					RoleWrites: func(role string) (bool, bool) { return true, role == "gameplay-programmer" }})
				admitted := d.Requests[0].Accepted
				if c[2] == "as a child task" {
					childTasks = append(childTasks, c[1])
				} else {
					noPath = append(noPath, c[1])
				}
				if admitted != (c[2] == "as a child task") {
					t.Errorf("the guidance says `%s` runs %q; policy admits a request for it: %v (%s)", c[1], c[2], admitted, d.Requests[0].Reason)
				}
			}
			if !slices.Equal(childTasks, tt.wantChildTasks) || !slices.Equal(noPath, tt.wantNoPath) {
				t.Errorf("child tasks %v (want %v), no path %v (want %v)", childTasks, tt.wantChildTasks, noPath, tt.wantNoPath)
			}
			var offered []string
			if o := offeredRoles.FindStringSubmatch(prompt); o != nil {
				for _, s := range codeSpanInText.FindAllStringSubmatch(o[1], -1) {
					offered = append(offered, s[1])
				}
			}
			if !slices.Equal(offered, childTasks) {
				t.Errorf("the run's Delegation section offers %v; the guidance offers %v", offered, childTasks)
			}
			if len(childTasks) == 0 && strings.Contains(prompt, "## Child tasks on GitHub") {
				t.Errorf("a role with no child task role is told about child tasks")
			}
			// Controls: every listed action is one policy carries out, for a child the root admitted;
			// a granted action that no verb carries out is not listed and is refused.
			edges := guidanceEdge.FindAllStringSubmatch(prompt, -1)
			if len(edges) != tt.wantEdges {
				t.Errorf("%d control edges listed, want %d", len(edges), tt.wantEdges)
			}
			for _, e := range edges {
				var listed []string
				for _, s := range codeSpanInText.FindAllStringSubmatch(e[2], -1) {
					listed = append(listed, s[1])
				}
				for _, act := range p.Agents[tt.role].Controls[e[1]] {
					ok, reason, _ := policy.DecideControl(policy.ControlFacts{Action: act, ControllerRole: p.Root, ChildRole: e[1],
						Profile: facts, ActorCanWrite: true, ChildStatus: policy.StatusRunning})
					if ok != slices.Contains(listed, act) {
						t.Errorf("control %s over %s: listed %v, policy allows %v (%s)", act, e[1], slices.Contains(listed, act), ok, reason)
					}
				}
			}
			if tt.wantEdges > 0 && !strings.Contains(prompt, "The profile also grants `fork`, `interrupt`, `set_effort`, which no command of the action carries out") {
				t.Errorf("the guidance does not say which granted controls nothing carries out:\n%s", prompt)
			}
		})
	}
}
