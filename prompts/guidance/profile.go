package guidance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Profile is a resolved multi-agent profile: the subset of keys the compiler reads.
type Profile struct {
	ID           string
	Root         string
	LogicalHash  string
	Agents       map[string]Agent
	Models       map[string]Model
	Routes       map[string]Route
	Coordination Coordination
}

// Agent is one role of the profile.
type Agent struct {
	ID               string
	Model            string
	CanSpawn         []string
	Controls         map[string][]string // target agent -> granted actions
	Backends         []string
	Trust            string
	Verification     string
	Permissions      string
	ExecutionMode    string // goal | turn
	GoalTokenBudget  string // numbers are kept as written so output matches the profile
	MaxGoalBudget    string
	StallWarningSecs string
	FinalizationSecs string
	AllowedTaskKinds []string
	Description      string
	Instructions     string
}

// Model binds a profile model id to an upstream model and a route.
type Model struct {
	UpstreamID string
	Route      string
}

// Route names a model route.
type Route struct {
	Name string
}

// Coordination holds the profile-wide delegation limits.
type Coordination struct {
	Orchestration       string // mcp | native | hybrid
	MaxActiveAgents     string
	MaxDepth            string
	MaxActiveWriters    string
	ResultVisibility    string
	NativeMaxThreads    string
	ContradictionPolicy string
}

// usesDurable reports whether child tasks (the durable path) are part of this orchestration.
func (c Coordination) usesDurable() bool {
	return c.Orchestration == "mcp" || c.Orchestration == "hybrid"
}

// usesNative reports whether Codex native subagents are part of this orchestration.
func (c Coordination) usesNative() bool {
	return c.Orchestration == "native" || c.Orchestration == "hybrid"
}

// ProfileError names the key that made a profile unusable.
type ProfileError struct {
	Key    string
	Reason string
}

func (e *ProfileError) Error() string { return fmt.Sprintf("invalid profile: %s: %s", e.Key, e.Reason) }

type node = map[string]any

// reader walks decoded JSON and records the first problem with its key path.
type reader struct{ err *ProfileError }

func (r *reader) fail(key, reason string) {
	if r.err == nil {
		r.err = &ProfileError{Key: key, Reason: reason}
	}
}

func (r *reader) obj(parent node, key, path string, required bool) node {
	v, ok := parent[key]
	if !ok {
		if required {
			r.fail(path, "is missing")
		}
		return nil
	}
	o, ok := v.(node)
	if !ok {
		r.fail(path, "must be an object")
	}
	return o
}

func (r *reader) str(parent node, key, path string, required bool) string {
	v, ok := parent[key]
	if !ok || v == nil {
		if required {
			r.fail(path, "is missing")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(path, "must be a string")
	}
	if required && strings.TrimSpace(s) == "" {
		r.fail(path, "must not be empty")
	}
	return s
}

// scalar reads a string or number and renders it as written in the profile.
func (r *reader) scalar(parent node, key, path string) string {
	v, ok := parent[key]
	if !ok || v == nil {
		r.fail(path, "is missing")
		return ""
	}
	switch t := v.(type) {
	case json.Number:
		return t.String()
	case string:
		if strings.TrimSpace(t) == "" {
			r.fail(path, "must not be empty")
		}
		return t
	case bool:
		return fmt.Sprint(t)
	}
	r.fail(path, "must be a string or a number")
	return ""
}

func (r *reader) strs(parent node, key, path string) []string {
	v, ok := parent[key]
	if !ok || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.fail(path, "must be a list of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			r.fail(fmt.Sprintf("%s[%d]", path, i), "must be a string")
			continue
		}
		out = append(out, s)
	}
	return out
}

// ParseProfile decodes and checks a resolved profile. The first problem is returned as a
// *ProfileError naming the key; unknown keys are ignored because a resolved profile carries
// more than the compiler reads.
func ParseProfile(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top node
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("invalid profile: not a JSON object: %w", err)
	}
	r := &reader{}
	p := &Profile{Agents: map[string]Agent{}, Models: map[string]Model{}, Routes: map[string]Route{}}
	if prof := r.obj(top, "profile", "profile", true); prof != nil {
		p.ID = r.str(prof, "id", "profile.id", true)
		p.Root = r.str(prof, "root", "profile.root", true)
	}
	p.LogicalHash = r.str(top, "logical_hash", "logical_hash", true)
	if routes := r.obj(top, "routes", "routes", true); routes != nil {
		// Sorted, as every other map here: the first problem must not depend on map order.
		for _, id := range sortedKeys(routes) {
			o, _ := routes[id].(node)
			if o == nil {
				r.fail("routes."+id, "must be an object")
				continue
			}
			p.Routes[id] = Route{Name: r.str(o, "name", "routes."+id+".name", true)}
		}
	}
	if models := r.obj(top, "models", "models", true); models != nil {
		for _, id := range sortedKeys(models) {
			o, _ := models[id].(node)
			if o == nil {
				r.fail("models."+id, "must be an object")
				continue
			}
			m := Model{UpstreamID: r.str(o, "upstream_id", "models."+id+".upstream_id", true), Route: r.str(o, "route", "models."+id+".route", true)}
			if _, ok := p.Routes[m.Route]; m.Route != "" && !ok {
				r.fail("models."+id+".route", fmt.Sprintf("names unknown route %q", m.Route))
			}
			p.Models[id] = m
		}
	}
	if co := r.obj(top, "coordination", "coordination", true); co != nil {
		c := &p.Coordination
		c.Orchestration = r.str(co, "orchestration", "coordination.orchestration", true)
		if c.Orchestration != "" && c.Orchestration != "mcp" && c.Orchestration != "native" && c.Orchestration != "hybrid" {
			r.fail("coordination.orchestration", "must be mcp, native or hybrid")
		}
		if c.usesDurable() {
			c.MaxActiveAgents = r.scalar(co, "max_active_agents", "coordination.max_active_agents")
			c.MaxDepth = r.scalar(co, "max_depth", "coordination.max_depth")
			c.MaxActiveWriters = r.scalar(co, "max_active_writers", "coordination.max_active_writers")
			c.ResultVisibility = r.scalar(co, "result_visibility", "coordination.result_visibility")
		}
		if c.usesNative() {
			c.NativeMaxThreads = r.scalar(co, "native_max_concurrent_threads", "coordination.native_max_concurrent_threads")
		}
		c.ContradictionPolicy = r.scalar(co, "contradiction_policy", "coordination.contradiction_policy")
	}
	agents := r.obj(top, "agents", "agents", true)
	for _, id := range sortedKeys(agents) {
		k := "agents." + id
		o, _ := agents[id].(node)
		if o == nil {
			r.fail(k, "must be an object")
			continue
		}
		a := Agent{ID: id}
		a.Model = r.str(o, "model", k+".model", true)
		if _, ok := p.Models[a.Model]; a.Model != "" && !ok {
			r.fail(k+".model", fmt.Sprintf("names unknown model %q", a.Model))
		}
		a.CanSpawn = r.strs(o, "can_spawn", k+".can_spawn")
		if ctl := r.obj(o, "controls", k+".controls", false); ctl != nil {
			a.Controls = map[string][]string{}
			for _, target := range sortedKeys(ctl) {
				g, _ := ctl[target].(node)
				if g == nil {
					r.fail(k+".controls."+target, "must be an object")
					continue
				}
				if _, ok := g["actions"]; !ok {
					r.fail(k+".controls."+target+".actions", "is missing")
				}
				a.Controls[target] = r.strs(g, "actions", k+".controls."+target+".actions")
			}
		}
		a.Backends = r.strs(o, "backends", k+".backends")
		a.Trust = r.str(o, "trust", k+".trust", true)
		a.Verification = r.str(o, "verification", k+".verification", true)
		a.Permissions = r.scalar(o, "permissions", k+".permissions")
		a.ExecutionMode = r.str(o, "execution_mode", k+".execution_mode", true)
		switch a.ExecutionMode {
		case "goal":
			a.GoalTokenBudget = r.scalar(o, "goal_token_budget", k+".goal_token_budget")
			a.MaxGoalBudget = r.scalar(o, "max_goal_token_budget", k+".max_goal_token_budget")
		case "turn", "":
		default:
			r.fail(k+".execution_mode", "must be goal or turn")
		}
		a.StallWarningSecs = r.scalar(o, "stall_warning_seconds", k+".stall_warning_seconds")
		a.FinalizationSecs = r.scalar(o, "finalization_grace_seconds", k+".finalization_grace_seconds")
		a.AllowedTaskKinds = r.strs(o, "allowed_task_kinds", k+".allowed_task_kinds")
		a.Description = r.str(o, "description", k+".description", false)
		a.Instructions = r.str(o, "instructions_text", k+".instructions_text", false)
		p.Agents[id] = a
	}
	if r.err == nil {
		checkReferences(p, r)
	}
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}

// checkReferences rejects unknown agents in the graph and cycles in can_spawn.
func checkReferences(p *Profile, r *reader) {
	if _, ok := p.Agents[p.Root]; !ok {
		r.fail("profile.root", fmt.Sprintf("names unknown agent %q", p.Root))
		return
	}
	for _, id := range p.agentIDs() {
		a := p.Agents[id]
		for i, child := range a.CanSpawn {
			if _, ok := p.Agents[child]; !ok {
				r.fail(fmt.Sprintf("agents.%s.can_spawn[%d]", id, i), fmt.Sprintf("names unknown agent %q", child))
				return
			}
		}
		for _, target := range sortedKeys(a.Controls) {
			if _, ok := p.Agents[target]; !ok {
				r.fail("agents."+id+".controls."+target, fmt.Sprintf("names unknown agent %q", target))
				return
			}
		}
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(id string, path []string) bool
	visit = func(id string, path []string) bool {
		switch state[id] {
		case active:
			r.fail("agents."+path[0]+".can_spawn", "forms a cycle: "+strings.Join(append(path, id), " -> "))
			return false
		case done:
			return true
		}
		state[id] = active
		for _, c := range p.Agents[id].CanSpawn {
			if !visit(c, append(path, id)) {
				return false
			}
		}
		state[id] = done
		return true
	}
	for _, id := range p.agentIDs() {
		if !visit(id, nil) {
			return
		}
	}
}

func (p *Profile) agentIDs() []string { return sortedKeys(p.Agents) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
