package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The multi-agent profile as delegation decisions read it (seed-guidance §1, §4). The bot parses
// `.codex/profile.json` with the guidance compiler (prompts/guidance) and copies the facts below;
// policy does not import that package, so the decisions stay pure and testable on their own.

// Values of an agent's trust and verification that change how its results are shown.
const (
	// TrustLow marks a role whose every material claim the parent must verify independently.
	TrustLow = "low"
	// VerificationRootAdjudication marks a role whose conclusions are adversarial input for the
	// root to adjudicate, never final decisions.
	VerificationRootAdjudication = "root_adjudication"
)

// OrchestrationNative is the profile orchestration in which children are Codex native subagents
// inside the run: the action files no child tasks for it (seed-guidance §4 maps only the durable
// path, mcp or hybrid, onto issues).
const OrchestrationNative = "native"

// ProfileFacts are the profile facts delegation and controls decide from.
type ProfileFacts struct {
	Root string // the root agent id
	// Orchestration is the coordination backend: mcp, native or hybrid. Under native every
	// delegation request is refused; "" reads as a durable backend.
	Orchestration string
	Agents        map[string]AgentFacts // by agent id, which is the studio role id
	// The limits, as ParseProfileLimit reads them. Each is a bound as written: 0 allows nothing
	// (max_depth 0: no child tasks; max_active_writers 0: no writing children; max_active_agents
	// 1: the root alone). The seed has no "unbounded" value, and reading 0 as one would silently
	// open a limit the profile meant to close.
	MaxDepth         int
	MaxActiveAgents  int // counted with the root
	MaxActiveWriters int
	// ContradictionPolicy is how disagreement between results is settled, as the profile names it.
	ContradictionPolicy string
}

// AgentFacts are one agent's facts.
type AgentFacts struct {
	CanSpawn     []string            // child roles it may request, in the profile's order
	Controls     map[string][]string // target role -> granted actions (steer, pause, continue, stop, ...)
	Trust        string              // TrustLow or another level
	Verification string              // VerificationRootAdjudication or another mode
	// Backends are the paths the agent runs on as a child: BackendMCP (a durable job, which the
	// action maps onto a child task) and BackendNative (a Codex native subagent inside the
	// parent's process). Empty for the root, which nobody spawns.
	Backends []string
}

// The backends a profile's agent may run on as a child (seed-guidance §1).
const (
	BackendMCP    = "mcp"
	BackendNative = "native"
)

// NativeOnly reports whether the agent runs as a child only as a Codex native subagent. The
// action has no native path (it does not configure Codex native subagents), so such a child can
// never run: it is neither offered nor filed as a child task.
func (a AgentFacts) NativeOnly() bool {
	return len(a.Backends) > 0 && !slices.Contains(a.Backends, BackendMCP)
}

// ChildTaskRoles are the roles parent may ask for as child tasks, in can_spawn's order: none under
// the native orchestration, and never a native-only one. The delegation answer offers these and
// no others.
func ChildTaskRoles(p ProfileFacts, parent string) []string {
	if p.Orchestration == OrchestrationNative {
		return nil
	}
	var roles []string
	for _, c := range p.Agents[parent].CanSpawn {
		if child, ok := p.Agents[c]; ok && !child.NativeOnly() {
			roles = append(roles, c)
		}
	}
	return roles
}

// ParseProfileLimit reads one coordination limit (max_depth, max_active_agents,
// max_active_writers) as the compiler keeps it, a string as written in the profile: a whole
// number, 0 or more. key names it in the error.
func ParseProfileLimit(key, value string) (int, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, fmt.Errorf("invalid profile: coordination.%s is missing", key)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid profile: coordination.%s must be a whole number, 0 or more: %q", key, oneLineValue(v))
	}
	return n, nil
}

// ChildResultMark is what the parent's tracking comment says beside a child's result, from the
// child role's trust and verification (seed-guidance §3 item 10): a low-trust child's result is
// evidence needing verification, and a root_adjudication child's conclusions are adversarial input
// for the root. Both may apply. "" for any other child, whose result is still evidence, not
// authority (ContradictionNote says how disagreement is settled).
func ChildResultMark(child AgentFacts) string {
	var marks []string
	if child.Trust == TrustLow {
		marks = append(marks, "**Evidence needing verification**: a low-trust role did only literal work; verify every material claim independently before relying on it.")
	}
	if child.Verification == VerificationRootAdjudication {
		marks = append(marks, "**Adversarial input**: these conclusions are for the root to adjudicate from primary evidence, not final decisions.")
	}
	return strings.Join(marks, " ")
}

// ContradictionNote is the tracking comment's line on settling disagreement between child
// results: the profile's contradiction_policy, and the rule every profile shares, primary
// evidence over a vote of models. "" when the profile names no policy.
func ContradictionNote(p ProfileFacts) string {
	policy := oneLineValue(p.ContradictionPolicy)
	if policy == "" {
		return ""
	}
	return fmt.Sprintf("Child results are evidence, not authority. Contradictions are settled by `%s`, from source, commands, tests or specifications, never by a vote of models.", strings.ReplaceAll(policy, "`", "'"))
}

// oneLineValue keeps a profile value on one line of bounded length for a message.
func oneLineValue(s string) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:100]) + "…"
	}
	return s
}
