package guidance

import (
	"context"
	"fmt"
	"github.com/codex-studio/studio-action/prompts"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SkillName is the orchestration skill's name; agent guidance refers to it by this name.
const SkillName = "mmo-profile-orchestration"

// SkillPath is where the orchestration skill is written, relative to the output directory.
const SkillPath = "guidance/skills/" + SkillName + "/SKILL.md"

// AgentPath is where an agent's guidance is written, relative to the output directory.
func AgentPath(id string) string { return "guidance/agents/" + id + ".md" }

// File is one compiled output.
type File struct {
	Path string // slash-separated, relative to the output directory
	Text string
}

// Compile turns a profile into guidance files sorted by path: one per agent, plus the
// orchestration skill when any agent can request or control others. The same profile always
// gives the same bytes: every map is walked in sorted order and nothing depends on the clock,
// the machine or the environment.
func Compile(p *Profile) []File {
	var files []File
	for _, id := range p.agentIDs() {
		files = append(files, File{Path: AgentPath(id), Text: agentText(p, id, RunModel{})})
	}
	if len(p.CoordinationCapable()) > 0 {
		files = append(files, File{Path: SkillPath, Text: skillText(p)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}

// CoordinationCapable lists, sorted, the agents that can request children or control others.
func (p *Profile) CoordinationCapable() []string {
	var ids []string
	for _, id := range p.agentIDs() {
		if a := p.Agents[id]; len(a.CanSpawn) > 0 || len(a.Controls) > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// CompileFile reads a profile file and writes its guidance under outDir, returning the paths
// written. outDir/guidance is replaced as a whole so a removed agent leaves no stale file. An
// outDir that is itself named guidance is that tree (`--out guidance` run in the project writes
// guidance/agents/..., not guidance/guidance/agents/...).
func CompileFile(ctx context.Context, profilePath, outDir string) ([]string, error) {
	if clean := filepath.Clean(outDir); filepath.Base(clean) == "guidance" {
		outDir = filepath.Dir(clean)
	}
	data, err := os.ReadFile(profilePath)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(outDir, "guidance")); err != nil {
		return nil, fmt.Errorf("clear %s: %w", filepath.Join(outDir, "guidance"), err)
	}
	return writeFiles(ctx, outDir, Compile(p))
}

// Installed says where a run's guidance was written.
type Installed struct {
	AgentFile string // absolute path of the role's guidance
	SkillFile string // absolute path of the orchestration skill, "" when the role coordinates nothing
	// GoalTokenBudget is the token budget of each writing call's goal, for an agent run as a
	// goal on the app-server engine; 0: one turn per call.
	GoalTokenBudget int64
}

// InstallForRole compiles the guidance of one role into dir, which the caller places outside
// the workspace so it is never committed and lives for one run only; run is the model the run
// uses, which the guidance states. ok is false when the profile has no agent for the role: the
// run then goes ahead without profile guidance.
func InstallForRole(ctx context.Context, profileJSON []byte, role, dir string, run RunModel) (inst Installed, ok bool, err error) {
	p, err := ParseProfile(profileJSON)
	if err != nil {
		return Installed{}, false, err
	}
	a, found := p.Agents[role]
	if !found {
		return Installed{}, false, nil
	}
	files := []File{{Path: AgentPath(role), Text: agentText(p, role, run)}}
	if len(a.CanSpawn) > 0 || len(a.Controls) > 0 {
		files = append(files, File{Path: SkillPath, Text: skillText(p)})
	}
	if _, err := writeFiles(ctx, dir, files); err != nil {
		return Installed{}, false, err
	}
	inst.AgentFile = filepath.Join(dir, filepath.FromSlash(AgentPath(role)))
	if a.ExecutionMode == "goal" && run.Engine == "app-server" {
		if inst.GoalTokenBudget, err = strconv.ParseInt(a.GoalTokenBudget, 10, 64); err != nil || inst.GoalTokenBudget <= 0 {
			return Installed{}, false, fmt.Errorf("agents.%s.goal_token_budget: %q is not a positive whole number of tokens", role, a.GoalTokenBudget)
		}
	}
	if len(files) == 2 {
		inst.SkillFile = filepath.Join(dir, filepath.FromSlash(SkillPath))
	}
	return inst, true, nil
}

func writeFiles(ctx context.Context, dir string, files []File) ([]string, error) {
	var written []string
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return written, err
		}
		// Agent ids come from the profile; refuse any that would write outside dir.
		if strings.Contains(f.Path, "..") || strings.ContainsAny(f.Path, "\\\x00") {
			return written, fmt.Errorf("refusing guidance path %q", f.Path)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, []byte(f.Text), 0o644); err != nil {
			return written, fmt.Errorf("write %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, nil
}

func hash16(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

func (p *Profile) limitLines() []string {
	c := p.Coordination
	lines := []string{fmt.Sprintf("- Orchestration: `%s`.", c.Orchestration)}
	if c.usesDurable() {
		lines = append(lines,
			fmt.Sprintf("- Concurrency slots (`refs/studio/slots/*`): at most %s runs at once, the root run included.", c.MaxActiveAgents),
			"- A finished child task gives its slot back; children that run one after another are not counted against any lifetime total.",
			fmt.Sprintf("- Maximum delegation depth: %s.", c.MaxDepth),
			fmt.Sprintf("- Maximum child tasks holding write locks (`refs/studio/locks/*`) at once: %s.", c.MaxActiveWriters),
			"- Overlapping writeFiles are refused mechanically: a lock ref that already exists cannot be created again.",
		)
	}
	if c.usesNative() {
		lines = append(lines, fmt.Sprintf("- The profile's native thread limit (%s) does not apply: the action has no native path and runs no Codex native subagents.", c.NativeMaxThreads))
	}
	lines = append(lines, fmt.Sprintf("- Contradictions are settled by `%s`.", c.ContradictionPolicy))
	return lines
}

func (p *Profile) backendText() string {
	switch p.Coordination.Orchestration {
	case "mcp":
		return `Delegation goes through the action. When your run's prompt has a Delegation
section, end with the JSON answer it describes: your summary and the child tasks
you ask for. The action checks each request against this profile's limits
(can_spawn, depth, active writers and agents, disjoint writeFiles), files the
admitted ones as sub-issues that each run as their own task, branch and pull
request, and lists the refused ones with the reason. Without a Delegation
section, do the work in this run and describe any follow-up task in your final
report (objective, paths, non-goals, deliverable and validation) for a person
to open as a task issue.`
	case "native":
		return noNativePath + `
This profile's orchestration is ` + "`native`" + `, so no role of it can be
delegated to: do the work in this run and describe any follow-up task in your
final report (objective, paths, non-goals, deliverable and validation) for a
person to open as a task issue.`
	default:
		return noNativePath + `
Of this hybrid profile, only roles with the ` + "`mcp`" + ` backend can be delegated
to, as child tasks that go through the action: when your run's prompt has a
Delegation section, end with the JSON answer it describes, and the action
checks each request against this profile's limits (can_spawn, depth, active
writers and agents, disjoint writeFiles), files the admitted ones as
sub-issues that each run as their own task, branch and pull request, and lists
the refused ones with the reason, a native-only role among them.`
	}
}

// noNativePath says plainly what the action does with the seed's native backend: nothing.
const noNativePath = `The action has no native path: it does not run Codex native subagents, so a
role whose only backend is ` + "`native`" + ` cannot run as your child.`

// childTaskRoles are the roles id may ask for as child tasks: its can_spawn under a durable
// orchestration, without the native-only ones (policy.ChildTaskRoles decides the same).
func (p *Profile) childTaskRoles(id string) []string {
	if !p.Coordination.usesDurable() {
		return nil
	}
	var roles []string
	for _, c := range p.Agents[id].CanSpawn {
		if bs := p.Agents[c].Backends; len(bs) == 0 || slices.Contains(bs, "mcp") {
			roles = append(roles, c)
		}
	}
	return roles
}

func (p *Profile) coordinationText(id string) string {
	c := p.Coordination
	// Side work is requested only by a role that has a child it can file.
	critical := `Stay on the critical path. Request independent side work early, then keep
working on what does not overlap. A child existing is no reason to wait; wait
only when your next step needs its output. Treat every child result as
evidence, not authority.`
	if len(p.childTaskRoles(id)) == 0 {
		critical = `Treat every result another role gives you as evidence, not authority.`
	}
	return fmt.Sprintf(`## Coordination contract

This run is pinned to profile `+"`%s`"+`, logical hash `+"`%s`"+`. The root role is
`+"`%s`"+`. Orchestration backend: `+"`%s`"+`.

%s

Limits:
%s

%s Settle disagreement from source, commands, tests,
specifications or other reproducible primary evidence, never by a vote of
models.
`, p.ID, hash16(p.LogicalHash), p.Root, c.Orchestration, p.backendText(), strings.Join(p.limitLines(), "\n"), critical)
}

// executionText says how the agent's calls run, and only what the action applies: a goal's token
// budget is set with the app-server engine (thread/goal/set, which Codex enforces); the profile's
// stall warning, finalization grace and budget ceiling are applied by nothing here, so the
// agent is not told of them.
func (p *Profile) executionText(a Agent, run RunModel) string {
	const finish = "When the objective is met and no\nrequired work remains, call `update_goal` with `status=\"complete\"` in the final\nturn, then give the result. A final message does not end an active goal. Use\n`blocked` only under the tool's repeated-impasse rule, never for ordinary\nuncertainty, slow progress or a budget running low."
	if a.ExecutionMode != "goal" {
		return "Execution: one Codex turn for each writing call."
	}
	switch run.Engine {
	case "app-server":
		return fmt.Sprintf("Execution: a Codex goal. Each writing call sets your thread's goal with a\ntoken budget of %s tokens; Codex goes on turn after turn while the goal is\nactive and stops it when the budget is spent. %s", a.GoalTokenBudget, finish)
	case "exec":
		return fmt.Sprintf("Execution: one Codex turn for each writing call. The profile asks for a goal\nwith a budget of %s tokens, but this run's Codex engine (`codex exec`) has no\ngoals, so none is set.", a.GoalTokenBudget)
	default:
		return fmt.Sprintf("Execution: a Codex goal with a token budget of %s tokens for each writing\ncall where the action runs Codex as an app server (`codex-engine: app-server`);\none Codex turn for each writing call otherwise. %s", a.GoalTokenBudget, finish)
	}
}

// modelLine states the model of the run: the model the run really uses, and where it differs
// from the profile's binding, what chose it.
func (p *Profile) modelLine(a Agent, run RunModel) string {
	model := p.Models[a.Model]
	binding := fmt.Sprintf("`%s` through route `%s` (%s)", model.UpstreamID, model.Route, p.Routes[model.Route].Name)
	effort := ""
	if run.Effort != "" {
		effort = fmt.Sprintf(" at `%s` effort", run.Effort)
	}
	switch run.Model {
	case "":
		return "Model: " + binding + ", the profile's binding: the action runs this role on it\nunless the run's `model` input, a model tier or the task's workflow chooses another."
	case model.UpstreamID:
		return fmt.Sprintf("Model: `%s`%s, the profile's binding %s.", run.Model, effort, binding)
	}
	return fmt.Sprintf("Model: `%s`%s. This run's `model` input, model tier or workflow chose it\nover the profile's binding, %s.", run.Model, effort, binding)
}

// agentText is the guidance one agent of a profile is given: its place in the tree, the model it
// runs on, what it may delegate and to whom, its controls and budgets. It is one long template on
// purpose: the text is read top to bottom by the agent, and its golden files review it the same way.
func agentText(p *Profile, id string, run RunModel) string {
	a := p.Agents[id]
	isRoot := id == p.Root
	kind := "a delegated participant"
	if isRoot {
		kind = "the root integration authority"
	}
	childTasks := p.childTaskRoles(id)
	var children []string
	for _, c := range a.CanSpawn {
		ca := p.Agents[c]
		desc := ca.Description
		if desc == "" {
			desc = "profile participant"
		}
		how := strings.Join(ca.Backends, "/") + ", as a child task"
		if !slices.Contains(childTasks, c) {
			how = strings.Join(ca.Backends, "/") + ", which the action cannot run (no native path)"
		}
		children = append(children, fmt.Sprintf("- `%s` via %s: %s", c, how, desc))
	}
	if len(children) == 0 {
		children = []string{"- none"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Studio agent: %s

You are `+"`%s`"+`, %s in profile `+"`%s`"+`.

%s
Trust: `+"`%s`"+`.
Verification: `+"`%s`"+`.
Highest permissions: `+"`%s`"+`.
%s

Child roles you may request, and how they run:
%s

%s`, id, id, kind, p.ID, p.modelLine(a, run), a.Trust, a.Verification, a.Permissions,
		p.executionText(a, run), strings.Join(children, "\n"), p.coordinationText(id))
	if !isRoot {
		b.WriteString(`
The parent and the root own integration and the final answer to the user.
Stay inside the delegated objective: do not widen the scope or make an
architecture or product decision nobody stated. Leave unrelated changes alone,
and return precise evidence, validation, risks and blockers.
`)
	}
	switch {
	case len(childTasks) > 0:
		b.WriteString(`
## Delegation checkpoint

Load the ` + "`" + SkillName + "`" + ` skill before long work. Within three substantive
calls at most, or before you start a second independent workstream, decide
what stays with you and what a direct child can do on its own. A substantive
call explores the repository, runs a shell command, looks something up,
analyses or implements; reading guidance and managing an existing child do not
count.

For non-trivial work, request at least one independent child task early. When
two independent branches qualify and slots allow, request them together. If
you request none, first state the concrete reason: the task is atomic, no
direct child is useful on its own, a required route is unavailable, a graph or
resource limit is used up, the user forbade delegation, or an authority or tool
boundary prevents a safe hand-off. "Working alone is easier" is not a reason.

## Child tasks on GitHub

Child tasks are task issues the action files from your delegation answer, as
sub-issues of this task's issue; each runs as its own task, branch and pull
request, and its end is linked on this issue. Ask for them in the delegation
answer when your prompt has a Delegation section; otherwise describe each
follow-up task in your final report (objective, paths, non-goals, deliverable
and validation) for a person to open as a task issue.

` + lifecycleRules + `
`)
	case len(a.CanSpawn) > 0:
		b.WriteString("\n## No delegation in this run\n\nNone of your child roles can run as a child task (the action has no native\npath), so do the work in this run and describe any follow-up task in your final\nreport for a person to open as a task issue.\n")
	}
	if len(a.Controls) > 0 {
		b.WriteString("\n## Controls\n\n" + controlsText(p, id) + "\n")
	}
	switch {
	case len(childTasks) > 0:
		b.WriteString(`
You must read and reconcile every material result from your descendants
before you report upward.
`)
	case len(a.CanSpawn) > 0:
	case len(a.Controls) > 0:
		b.WriteString("\nYou may not request child tasks.\n")
	default:
		b.WriteString("\nYou are a true leaf participant: you neither request child tasks nor control other agents.\n")
	}
	if a.Trust == "low" {
		b.WriteString(`
## Low-trust boundary

Do only bounded, literal work whose result can be checked directly. Do not
infer intent, architecture, correctness, cause or a recommended action unless
the task and contract allow it. Report conflicts without picking a side. Your
parent checks every material claim independently.
`)
	}
	if a.Verification == "root_adjudication" {
		b.WriteString("\nYour conclusions are adversarial input for the root to adjudicate, not final decisions.\n")
	}
	if text := strings.TrimSpace(a.Instructions); text != "" {
		b.WriteString("\n## Profile instructions for this role\n\n" + text + "\n")
	}
	return b.String()
}

// lifecycleRules are the seed's durable-job lifecycle rules (seed-guidance §3 item 8) in the
// action's terms: a child's result is its pull request, a child's issue keeps its work.
const lifecycleRules = `- Accept a child's result before relying on it: its result is its pull request,
  and it counts once a person with write access approves that pull request.
  Until then it is evidence to check, not a base to build on.
- Discover retained work before replacing it: a child the action filed stays
  retained on its issue, branch and pull request when it pauses, blocks or this
  task runs again, and an active child keeps counting against the limits and
  holding its writeFiles. Ask only for work no existing child holds; build on
  a retained child instead of asking for a replacement.
- A failed, stopped or cancelled child keeps its evidence (its issue, status
  comment, run artifact and branch) but is no successful result: report its
  state and the uncertainty it leaves, and do not quietly switch to another
  role or route.
- Never act on an issue number you guessed or one that a model's output
  supplied.`

// CarriedOutControls are the control actions a verb of the action carries out, pinned to
// policy.ControlActions by a test (prompts does not import policy). A profile may grant others
// (the seed's interrupt, fork, set_effort): the guidance never lists those as things anyone
// carries out, and `studio validate` says the action ignores them.
var CarriedOutControls = []string{"steer", "pause", "continue", "stop"}

// UncarriedControls lists, sorted and once each, the actions agent id's control graph grants that
// no verb carries out.
func (p *Profile) UncarriedControls(id string) []string {
	var out []string
	for _, acts := range p.Agents[id].Controls {
		for _, act := range acts {
			if !slices.Contains(CarriedOutControls, act) && !slices.Contains(out, act) {
				out = append(out, act)
			}
		}
	}
	sort.Strings(out)
	return out
}

// controlsText says how the action carries out the controls of agent id: people with write access
// post them on a child's issue, and policy.DecideControl allows only the graph's edges.
func controlsText(p *Profile, id string) string {
	a := p.Agents[id]
	var edges []string
	for _, target := range sortedKeys(a.Controls) {
		var acts []string
		for _, act := range a.Controls[target] {
			if slices.Contains(CarriedOutControls, act) {
				acts = append(acts, act)
			}
		}
		if len(acts) > 0 {
			edges = append(edges, fmt.Sprintf("- over `%s`: %s", target, strings.Join(codeSpans(acts), ", ")))
		}
	}
	if len(edges) == 0 {
		edges = []string{"- none the action carries out"}
	}
	reach := "a task linked as a\nsub-issue of a task run as `" + id + "`"
	if len(a.CanSpawn) == 0 {
		// policy.DecideControl: a control-only role's edges reach children another role admitted.
		reach = "a child task another\nrole of the profile admitted: a task linked as a sub-issue of a task run as a\nrole that may request the child's role"
	}
	text := fmt.Sprintf(`People with write access carry out this control graph with `+"`/studio steer <text>`"+`,
`+"`/studio pause`, `/studio continue` and `/studio stop`"+` on the issue of %s; the action refuses any action
the graph does not grant over the child's role. Agents post no commands: the `+"`/studio`"+` commands are
%s, and a person posts them.

Your edges:
%s`, reach, prompts.VerbsSentence(), strings.Join(edges, "\n"))
	if un := p.UncarriedControls(id); len(un) > 0 {
		text += fmt.Sprintf("\n\nThe profile also grants %s, which no command of the action carries out: nobody\ncan use them here.", strings.Join(codeSpans(un), ", "))
	}
	if !p.Coordination.usesDurable() {
		text += "\n\nIn a `native` profile the action files no child tasks, so these reach only task\nissues a person links as sub-issues."
	}
	return text
}

func codeSpans(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

// cell makes a value safe inside a Markdown table cell.
func cell(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " "))
}

// skillText is the coordination skill every agent of a profile shares: the table of agents, the
// delegation and control rules, the budgets and the evidence to keep. Like agentText it is one
// template read in order, pinned by golden files.
func skillText(p *Profile) string {
	c := p.Coordination
	var rows []string
	for _, id := range p.agentIDs() {
		a := p.Agents[id]
		backends := strings.Join(a.Backends, "/")
		if backends == "" {
			backends = "root"
		}
		kinds := strings.Join(a.AllowedTaskKinds, ", ")
		if kinds == "" {
			kinds = "root-owned"
		}
		children := strings.Join(a.CanSpawn, ", ")
		if children == "" {
			children = "none"
		}
		vals := []string{"`" + id + "`", backends, kinds, a.Permissions, a.Trust + "/" + a.Verification, children}
		for i := range vals {
			vals[i] = cell(vals[i])
		}
		rows = append(rows, "| "+strings.Join(vals, " | ")+" |")
	}
	var controls []string
	hasDurableLifecycle := false
	for _, id := range p.agentIDs() {
		a := p.Agents[id]
		for _, target := range sortedKeys(a.Controls) {
			var acts []string
			for _, act := range a.Controls[target] {
				if slices.Contains(CarriedOutControls, act) {
					acts = append(acts, "`"+act+"`")
				}
			}
			if len(acts) > 0 {
				controls = append(controls, fmt.Sprintf("- `%s` -> `%s`: %s", id, target, strings.Join(acts, ", ")))
			}
		}
		if len(a.Controls) > 0 {
			hasDurableLifecycle = true
		}
		if len(p.childTaskRoles(id)) > 0 {
			hasDurableLifecycle = true
		}
	}
	hasDurableLifecycle = hasDurableLifecycle && c.usesDurable()

	var pathKind, paths string
	switch c.Orchestration {
	case "native":
		pathKind = "no delegation path"
		paths = `- ` + strings.ReplaceAll(noNativePath, "\n", "\n  ") + `
- Child tasks run by the action are not available in this profile: do the work
  in the run and describe follow-up work in the final report.`
	case "mcp":
		pathKind = "child tasks"
		paths = `- Child tasks run by the action: when your prompt has a Delegation section, end
  with its JSON answer; the action files the admitted requests as sub-issues and
  enforces the limits with lock and slot refs.
- Codex native subagents are not available in this profile.`
	default:
		pathKind = "child tasks"
		paths = `- ` + strings.ReplaceAll(noNativePath, "\n", "\n  ") + `
- Ask for child tasks of the roles with the ` + "`mcp`" + ` backend: when your prompt
  has a Delegation section, end with its JSON answer; the action files the
  admitted requests as sub-issues and enforces the limits with lock and slot refs.`
	}
	controlOnly := ""
	if len(controls) > 0 {
		controlOnly = " A control-only role must not request children; it uses the lifecycle\nand the control graph below only at a real dependency, correction or risk\nboundary."
	}

	var b strings.Builder
	fmt.Fprintf(&b, `---
name: %s
description: "Coordinate studio profile %s on GitHub. Use for non-trivial work when the current role can request or control durable work through %s, especially parallel investigation, specialist work, independent verification or bounded nested delegation."
---

# Orchestrate the profile

Find the current role in this run's agent guidance. Request only that role's
direct children, and keep exactly to the profile graph and limits below. You
keep the critical path and the final integration.

## Delegation checkpoint

This applies only when the current role's `+"`Direct children`"+` cell is not
`+"`none`"+`.%s

Within three substantive calls at most, or before entering a second independent
workstream:

1. State the critical-path work the current role keeps.
2. Identify independent work that suits a permitted child.
3. Request at least one useful branch for non-trivial work that can be split.
4. Request two or more independent branches together when slots allow.
5. Go on with non-overlapping work straight after requesting.

If you skip delegation, state one concrete reason first: an atomic task, no
direct child useful on its own, an unavailable route, a graph or resource limit
used up, an explicit prohibition from the user, or an authority or tool
boundary. Not knowing the orchestration tools is not a reason.

## Choose the execution path

%s
`, SkillName, p.ID, pathKind, controlOnly, paths)
	if hasDurableLifecycle {
		b.WriteString(`
## Child-task lifecycle

The action runs child tasks: each admitted request becomes a sub-issue with its
own run, branch and pull request, and its end is linked in the parent's
tracking comment. For each child give an objective, the context and paths it
needs, non-goals, the deliverable and the validation evidence expected.

` + lifecycleRules + `

Settle conflicts with primary evidence, not by vote or model reputation. An
unavailable route or a malformed result is explicit uncertainty, not
permission to quietly switch to another route.
`)
	}
	if len(controls) > 0 {
		b.WriteString("\n## Control graph\n\nPeople with write access carry out these edges with `/studio steer <text>`,\n`/studio pause`, `/studio continue` and `/studio stop` on the issue of a task linked as a\nsub-issue of a task run as the controlling role (a control-only role: of a task run\nas a role that may request the child's role); the action refuses any action the\ngraph does not grant. The studio's commands are " + prompts.VerbsSentence() + "; people post them, agents do not.\n\n" + strings.Join(controls, "\n") + "\n")
		var uncarried []string
		for _, id := range p.agentIDs() {
			for _, act := range p.UncarriedControls(id) {
				if !slices.Contains(uncarried, act) {
					uncarried = append(uncarried, act)
				}
			}
		}
		if len(uncarried) > 0 {
			slices.Sort(uncarried)
			b.WriteString("\nThe profile also grants " + strings.Join(codeSpans(uncarried), ", ") + ", which no command of the action\ncarries out: nobody can use them here.\n")
		}
		if !c.usesDurable() {
			b.WriteString("\nIn a `native` profile the action files no child tasks, so these reach only task\nissues a person links as sub-issues.\n")
		}
	}
	fmt.Fprintf(&b, `
## Profile graph

| Role | Backend | Task kinds | Permissions | Trust/verification | Direct children |
|---|---|---|---|---|---|
%s

## Mechanical limits

%s
`, strings.Join(rows, "\n"), strings.Join(p.limitLines(), "\n"))
	return b.String()
}
