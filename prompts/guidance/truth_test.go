package guidance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// What the action does for a profile, found by asking the code that does it (policy's delegation
// and control decisions, the command list bot's table is pinned to), not by reading the texts.
type actionFacts struct {
	orchestration string
	filesChildren bool // DecideDelegation admits a well-formed request from the root
	controls      bool // the profile has a control graph, and DecideControl carries out a granted control
}

// truthProfile is hybrid.json with the orchestration set and, without controls, every control
// edge removed. With controls the root also controls its writing child, so an edge that the
// action can reach (a sub-issue of a task run as the root) is always there.
func truthProfile(t *testing.T, orchestration string, withControls bool) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(readProfile(t, "hybrid.json"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["coordination"].(map[string]any)["orchestration"] = orchestration
	for id, raw := range doc["agents"].(map[string]any) {
		a := raw.(map[string]any)
		delete(a, "controls")
		if withControls && id == "warden" {
			a["controls"] = map[string]any{"builder": map[string]any{"actions": []any{"steer", "pause", "stop"}}}
		}
		if withControls && id == "lead" {
			a["controls"] = map[string]any{"builder": map[string]any{"actions": []any{"steer", "pause", "continue", "stop"}}}
		}
		if orchestration == "native" && id != "lead" {
			a["backends"] = []any{"native"}
		}
		if orchestration == "mcp" && id != "lead" {
			a["backends"] = []any{"mcp"}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func factsOf(t *testing.T, p *Profile) actionFacts {
	t.Helper()
	pf := policy.ProfileFacts{Root: p.Root, Orchestration: p.Coordination.Orchestration, Agents: map[string]policy.AgentFacts{}}
	for _, lim := range []struct {
		s   string
		dst *int
	}{{p.Coordination.MaxDepth, &pf.MaxDepth}, {p.Coordination.MaxActiveAgents, &pf.MaxActiveAgents}, {p.Coordination.MaxActiveWriters, &pf.MaxActiveWriters}} {
		n, err := strconv.Atoi(lim.s)
		if err != nil {
			n = 8 // a native profile has no durable limits; DecideDelegation refuses it before any limit
		}
		*lim.dst = n
	}
	hasControls := false
	for id, a := range p.Agents {
		pf.Agents[id] = policy.AgentFacts{CanSpawn: a.CanSpawn, Controls: a.Controls, Trust: a.Trust, Verification: a.Verification}
		hasControls = hasControls || len(a.Controls) > 0
	}
	d := policy.DecideDelegation(policy.DelegationFacts{
		Parent: p.Root, Profile: pf,
		Requests:   []policy.DelegationRequest{{Role: "builder", Objective: "add the parser", WriteFiles: []string{"src/parse.go"}}},
		RoleWrites: func(role string) (bool, bool) { return true, role == "builder" },
	})
	f := actionFacts{orchestration: p.Coordination.Orchestration, filesChildren: len(d.Requests) == 1 && d.Requests[0].Accepted}
	if hasControls {
		ok, _, _ := policy.DecideControl(policy.ControlFacts{Action: policy.ControlSteer, ControllerRole: p.Root, ChildRole: "builder",
			Profile: pf, ActorCanWrite: true, ChildStatus: policy.StatusRunning})
		refused, _, _ := policy.DecideControl(policy.ControlFacts{Action: policy.ControlSteer, ControllerRole: p.Root, ChildRole: "scout",
			Profile: pf, ActorCanWrite: true, ChildStatus: policy.StatusRunning})
		f.controls = ok && !refused
	}
	return f
}

// A claim is a kind of sentence the guidance says about a mechanism, and when it is true. The
// first claim whose pattern matches a sentence decides it, so the narrow ones come first.
type claim struct {
	re    *regexp.Regexp
	holds func(actionFacts) bool
	why   string
}

func always(actionFacts) bool { return true }
func never(actionFacts) bool  { return false }

var claims = []claim{
	// Promises of work not done yet are never true: the text must say what the action does.
	{regexp.MustCompile(`(?i)\byet\b`), never, "promises something for later"},
	{regexp.MustCompile(`(?i)follow-up issues?`), never, "nothing files follow-up issues"},
	// Neutral statements about what people and agents do, true of every profile.
	{regexp.MustCompile(`(?i)a person posts them|people post them|post(s)? no commands?|the action does not enforce|cannot enforce|do not apply to them|never act on an issue number|the action's write locks`),
		always, ""},
	// The action has no native path, for every profile; which children it cannot run is read from
	// the delegation decision by TestGuidanceStatesTheRunsFacts (cmd/studio).
	{regexp.MustCompile(`(?i)the action has no native path|which the action cannot run \(no native path\)|none of your child roles can run as a child task|native thread limit \(\d+\) does not apply`),
		always, ""},
	{regexp.MustCompile(`(?i)no role of it can be delegated to`),
		func(f actionFacts) bool { return !f.filesChildren }, "says no role can be delegated to"},
	// The model the run uses, checked against the run's route by TestGuidanceStatesTheRunsFacts.
	{regexp.MustCompile("(?i)the profile's binding"), always, ""},
	{regexp.MustCompile(`(?i)native subagents are not available`),
		func(f actionFacts) bool { return f.orchestration == "mcp" }, "says native subagents are unavailable"},
	{regexp.MustCompile(`(?i)files no child tasks|child tasks run by the action are not available|no child tasks are filed`),
		func(f actionFacts) bool { return !f.filesChildren }, "says the action files no child tasks"},
	{regexp.MustCompile(`(?i)(files|becomes|become|filed as) (the admitted (ones|requests) as )?(a )?sub-issues?|child tasks are task issues the action files|admitted request becomes`),
		func(f actionFacts) bool { return f.filesChildren }, "says the action files child tasks"},
	{regexp.MustCompile(`(?i)delegation section|delegation answer`),
		func(f actionFacts) bool { return f.filesChildren }, "names the delegation answer"},
	{regexp.MustCompile(`(?i)delegation goes through the action|a child the action filed|child tasks go through the action`),
		func(f actionFacts) bool { return f.filesChildren }, "says the action files child tasks"},
	{regexp.MustCompile(`(?i)native subagents?`),
		func(f actionFacts) bool { return f.orchestration != "mcp" }, "names native subagents"},
	{regexp.MustCompile("/studio (steer|pause|continue|stop)|controls? (of|in) the graph|control graph|control edges"),
		func(f actionFacts) bool { return f.controls }, "names the controls"},
	// A goal's budget is set on the app-server engine (TestAppServerGoalRunsUntilItsBudgetIsSpent
	// in bot/codex, TestGoalAgentRunsAsAGoal in bot), and never on exec.
	{regexp.MustCompile("(?i)a codex goal with a token budget|`codex-engine: app-server`"), always, ""},
	{regexp.MustCompile(`(?i)lock refs?|slot refs?|refs/studio/`),
		func(f actionFacts) bool { return f.filesChildren }, "names lock or slot refs"},
}

// mechanism marks a sentence that tells the agent what the action or the studio does.
var mechanism = regexp.MustCompile(`(?i)the action|/studio|sub-issue|child tasks? (run|are|is)|follow-up`)

// sentences splits a compiled text into its prose sentences and bullets; headings, front matter
// and table rows are skipped.
func sentences(text string) []string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		var prose []string
		for _, line := range strings.Split(para, "\n") {
			l := strings.TrimSpace(line)
			switch {
			case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "|") || l == "---" || strings.HasPrefix(l, "name:") || strings.HasPrefix(l, "description:"):
			case strings.HasPrefix(l, "- ") || regexp.MustCompile(`^\d+\. `).MatchString(l):
				if len(prose) > 0 {
					out = append(out, splitSentences(strings.Join(prose, " "))...)
					prose = nil
				}
				prose = append(prose, l)
			default:
				prose = append(prose, l)
			}
		}
		if len(prose) > 0 {
			out = append(out, splitSentences(strings.Join(prose, " "))...)
		}
	}
	return out
}

var sentenceEnd = regexp.MustCompile("([.!?:;]) +([A-Z`\"(])")

func splitSentences(s string) []string {
	s = sentenceEnd.ReplaceAllString(s, "$1\x00$2")
	return strings.Split(s, "\x00")
}

// TestCompiledGuidanceSaysWhatTheActionDoes compiles the guidance of every orchestration, with
// and without a control graph, and checks each sentence that names a mechanism against what the
// action does for that profile: a sentence about child tasks against policy's delegation
// decision, one about controls against its control decision, every /studio command against the
// dispatcher's verbs. A mechanism sentence that no claim covers fails too, so new text cannot
// slip past the check.
func TestCompiledGuidanceSaysWhatTheActionDoes(t *testing.T) {
	for _, orch := range []string{"native", "mcp", "hybrid"} {
		for _, withControls := range []bool{false, true} {
			name := fmt.Sprintf("%s/controls=%v", orch, withControls)
			t.Run(name, func(t *testing.T) {
				p, err := ParseProfile(truthProfile(t, orch, withControls))
				if err != nil {
					t.Fatal(err)
				}
				facts := factsOf(t, p)
				if want := orch != "native"; facts.filesChildren != want {
					t.Fatalf("policy files children = %v for %s, the test expects %v", facts.filesChildren, orch, want)
				}
				if facts.controls != withControls {
					t.Fatalf("policy carries out controls = %v, the test expects %v", facts.controls, withControls)
				}
				for _, f := range Compile(p) {
					if bad := prompts.UnknownVerbs(f.Text); len(bad) > 0 {
						t.Errorf("%s mentions /studio %v, which the dispatcher does not have", f.Path, bad)
					}
					for _, v := range policy.ControlActions {
						if !slices.Contains(prompts.Verbs, v) {
							t.Errorf("policy's control %q is no verb of the dispatcher", v)
						}
					}
					for _, s := range sentences(f.Text) {
						matched := false
						for _, c := range claims {
							if !c.re.MatchString(s) {
								continue
							}
							matched = true
							if !c.holds(facts) {
								t.Errorf("%s %s, which is false for %s:\n  %s", f.Path, c.why, name, s)
							}
							break
						}
						if !matched && mechanism.MatchString(s) {
							t.Errorf("%s: no claim covers this sentence about a mechanism; add one to claims:\n  %s", f.Path, s)
						}
					}
				}
			})
		}
	}
}

// TestCompiledGuidanceKeepsTheLifecycleRules: wherever child tasks exist, the guidance carries the
// seed's lifecycle rules in the action's terms (seed-guidance §3 item 8).
func TestCompiledGuidanceKeepsTheLifecycleRules(t *testing.T) {
	rules := []string{
		"accept", // a child's result is accepted (an approving review) before it is relied on
		"retained",
		"keeps its evidence",
	}
	for _, orch := range []string{"mcp", "hybrid"} {
		p, err := ParseProfile(truthProfile(t, orch, true))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Compile(p) {
			if f.Path != SkillPath && f.Path != AgentPath("lead") {
				continue
			}
			for _, r := range rules {
				if !strings.Contains(f.Text, r) {
					t.Errorf("%s %s lacks the lifecycle rule %q", orch, f.Path, r)
				}
			}
		}
	}
}

// The controls the guidance lists as carried out are exactly the ones policy carries out.
func TestCarriedOutControlsArePolicysControls(t *testing.T) {
	if !slices.Equal(CarriedOutControls, policy.ControlActions) {
		t.Errorf("CarriedOutControls = %v, policy.ControlActions = %v", CarriedOutControls, policy.ControlActions)
	}
}

// childTaskRoles and policy.ChildTaskRoles decide alike for every agent of every orchestration.
func TestChildTaskRolesAgreeWithPolicy(t *testing.T) {
	for _, orch := range []string{"native", "mcp", "hybrid"} {
		p, err := ParseProfile(truthProfile(t, orch, true))
		if err != nil {
			t.Fatal(err)
		}
		pf := policy.ProfileFacts{Orchestration: orch, Agents: map[string]policy.AgentFacts{}}
		for id, a := range p.Agents {
			pf.Agents[id] = policy.AgentFacts{CanSpawn: a.CanSpawn, Backends: a.Backends}
		}
		for id := range p.Agents {
			if got, want := p.childTaskRoles(id), policy.ChildTaskRoles(pf, id); !slices.Equal(got, want) {
				t.Errorf("%s %s: guidance %v, policy %v", orch, id, got, want)
			}
		}
	}
}
