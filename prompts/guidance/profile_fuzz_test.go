package guidance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseProfile: the profile is a repository file the bot reads on every delegating run, so
// ParseProfile never panics and says the same about the same bytes every time (the first problem,
// not one picked by map order); a profile it accepts is a closed graph (the root, every child,
// control target, model and route exist; can_spawn has no cycle), written back as JSON it parses
// the same, and it compiles to the same files every time, one per agent plus at most the skill.
func FuzzParseProfile(f *testing.F) {
	for _, name := range []string{"flat.json", "hybrid.json", "native.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"profile": {"id": "p", "root": "a"}, "logical_hash": "h", "routes": {"r": {"name": "R"}}, "models": {"m": {"upstream_id": "u", "route": "r"}},
		  "coordination": {"orchestration": "native", "native_max_concurrent_threads": true, "contradiction_policy": 2},
		  "agents": {"a": {"model": "m", "can_spawn": ["b"], "trust": "t", "verification": "v", "permissions": "p", "execution_mode": "goal", "goal_token_budget": 1e3, "max_goal_token_budget": "9",
		    "stall_warning_seconds": 1, "finalization_grace_seconds": 1, "controls": {"b": {"actions": null}}, "backends": [], "allowed_task_kinds": ["k"]},
		             "b": {"model": "m", "can_spawn": ["a"], "trust": "t", "verification": "v", "permissions": "p", "execution_mode": "turn", "stall_warning_seconds": 1, "finalization_grace_seconds": 1}}}`,
		`null`,
		`[]`,
		`{"profile": {"id": "p", "root": "../x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		for range 3 {
			again, err2 := ParseProfile(data)
			if !reflect.DeepEqual(again, p) || errText(err2) != errText(err) {
				t.Fatalf("ParseProfile gave %v, then %v", errText(err), errText(err2))
			}
		}
		if err != nil {
			if p != nil {
				t.Fatalf("an error (%v) with a profile", err)
			}
			return
		}
		if _, ok := p.Agents[p.Root]; !ok {
			t.Fatalf("root %q is not an agent", p.Root)
		}
		for id, m := range p.Models {
			if _, ok := p.Routes[m.Route]; !ok {
				t.Fatalf("model %q names unknown route %q", id, m.Route)
			}
		}
		for id, a := range p.Agents {
			if _, ok := p.Models[a.Model]; !ok || a.ID != id {
				t.Fatalf("agent %q (id %q) names unknown model %q", id, a.ID, a.Model)
			}
			if a.ExecutionMode != "goal" && a.ExecutionMode != "turn" {
				t.Fatalf("agent %q: execution mode %q", id, a.ExecutionMode)
			}
			for _, c := range a.CanSpawn {
				if _, ok := p.Agents[c]; !ok {
					t.Fatalf("agent %q spawns unknown %q", id, c)
				}
				if reaches(p, c, id) {
					t.Fatalf("can_spawn cycle through %q and %q", id, c)
				}
			}
			for target := range a.Controls {
				if _, ok := p.Agents[target]; !ok {
					t.Fatalf("agent %q controls unknown %q", id, target)
				}
			}
		}

		again, err := ParseProfile(renderProfile(t, p))
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("the profile written back parses to %+v, %v; want %+v", again, err, p)
		}

		files := Compile(p)
		if !reflect.DeepEqual(Compile(p), files) {
			t.Fatal("Compile gave different files for the same profile")
		}
		if n := len(files) - len(p.Agents); n != 0 && n != 1 {
			t.Fatalf("%d files for %d agents", len(files), len(p.Agents))
		}
		for _, file := range files {
			if !strings.HasPrefix(file.Path, "guidance/") {
				t.Fatalf("compiled path %q is outside guidance/", file.Path)
			}
		}
	})
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// reaches says whether to is reachable from from over can_spawn.
func reaches(p *Profile, from, to string) bool {
	seen := map[string]bool{}
	next := []string{from}
	for len(next) > 0 {
		id := next[0]
		next = next[1:]
		if id == to {
			return true
		}
		if !seen[id] {
			seen[id] = true
			next = append(next, p.Agents[id].CanSpawn...)
		}
	}
	return false
}

// renderProfile writes p as a resolved profile: the keys ParseProfile reads, numbers as the
// strings it kept, nil lists as null and empty ones as [] (the parser keeps that difference).
func renderProfile(t *testing.T, p *Profile) []byte {
	t.Helper()
	set := func(m map[string]any, key, v string) {
		if v != "" {
			m[key] = v
		}
	}
	co := map[string]any{"orchestration": p.Coordination.Orchestration}
	set(co, "max_active_agents", p.Coordination.MaxActiveAgents)
	set(co, "max_depth", p.Coordination.MaxDepth)
	set(co, "max_active_writers", p.Coordination.MaxActiveWriters)
	set(co, "result_visibility", p.Coordination.ResultVisibility)
	set(co, "native_max_concurrent_threads", p.Coordination.NativeMaxThreads)
	set(co, "contradiction_policy", p.Coordination.ContradictionPolicy)
	routes := map[string]any{}
	for id, r := range p.Routes {
		routes[id] = map[string]any{"name": r.Name}
	}
	models := map[string]any{}
	for id, m := range p.Models {
		models[id] = map[string]any{"upstream_id": m.UpstreamID, "route": m.Route}
	}
	agents := map[string]any{}
	for id, a := range p.Agents {
		o := map[string]any{"model": a.Model, "can_spawn": a.CanSpawn, "backends": a.Backends, "allowed_task_kinds": a.AllowedTaskKinds,
			"trust": a.Trust, "verification": a.Verification, "execution_mode": a.ExecutionMode, "description": a.Description, "instructions_text": a.Instructions}
		set(o, "permissions", a.Permissions)
		set(o, "goal_token_budget", a.GoalTokenBudget)
		set(o, "max_goal_token_budget", a.MaxGoalBudget)
		set(o, "stall_warning_seconds", a.StallWarningSecs)
		set(o, "finalization_grace_seconds", a.FinalizationSecs)
		if a.Controls != nil {
			ctl := map[string]any{}
			for target, actions := range a.Controls {
				ctl[target] = map[string]any{"actions": actions}
			}
			o["controls"] = ctl
		}
		agents[id] = o
	}
	data, err := json.Marshal(map[string]any{
		"profile": map[string]any{"id": p.ID, "root": p.Root}, "logical_hash": p.LogicalHash,
		"routes": routes, "models": models, "coordination": co, "agents": agents,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}
