package guidance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
		files = append(files, File{Path: AgentPath(id), Text: agentText(p, id)})
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
// written. outDir/guidance is replaced as a whole so a removed agent leaves no stale file.
func CompileFile(ctx context.Context, profilePath, outDir string) ([]string, error) {
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
}

// InstallForRole compiles the guidance of one role into dir, which the caller places outside
// the workspace so it is never committed and lives for one run only. ok is false when the
// profile has no agent for the role: the run then goes ahead without profile guidance.
func InstallForRole(ctx context.Context, profileJSON []byte, role, dir string) (inst Installed, ok bool, err error) {
	p, err := ParseProfile(profileJSON)
	if err != nil {
		return Installed{}, false, err
	}
	a, found := p.Agents[role]
	if !found {
		return Installed{}, false, nil
	}
	files := []File{{Path: AgentPath(role), Text: agentText(p, role)}}
	if len(a.CanSpawn) > 0 || len(a.Controls) > 0 {
		files = append(files, File{Path: SkillPath, Text: skillText(p)})
	}
	if _, err := writeFiles(ctx, dir, files); err != nil {
		return Installed{}, false, err
	}
	inst.AgentFile = filepath.Join(dir, filepath.FromSlash(AgentPath(role)))
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
			"- A finished, suspended or paused child task gives its slot back; children that run one after another are not counted against any lifetime total.",
			fmt.Sprintf("- Maximum sub-issue depth (the length of the parent-issue chain): %s. Deeper requests are refused with the reason.", c.MaxDepth),
			fmt.Sprintf("- Maximum child tasks holding write locks (`refs/studio/locks/*`) at once: %s.", c.MaxActiveWriters),
			"- Overlapping writeFiles are refused mechanically: a lock ref that already exists cannot be created again.",
			fmt.Sprintf("- Child result visibility: %s.", c.ResultVisibility),
		)
	}
	if c.usesNative() {
		lines = append(lines, fmt.Sprintf("- Maximum Codex native subagent threads at once, not counting the root: %s.", c.NativeMaxThreads))
	}
	lines = append(lines, fmt.Sprintf("- Contradictions are settled by `%s`.", c.ContradictionPolicy))
	return lines
}

func (p *Profile) backendText() string {
	switch p.Coordination.Orchestration {
	case "mcp":
		return `Delegation goes through the action. List the child tasks you need in your
final report; the action files each one as a sub-issue of this issue with its
task block filled in, and runs it in its own workflow run on its own branch and
pull request. Each child is durable and bounded: it holds a concurrency slot
and write locks, its lineage is the parent-issue chain, its output is checked
against its task block, it can be steered or stopped with ` + "`/studio`" + ` comments,
and its issue, pull request, status comment and run artifact keep the evidence.`
	case "native":
		return `Delegation uses Codex native subagents inside this run. They start fast and
share this workspace, but the action cannot enforce a per-child write scope,
an output contract or each edge of the spawn graph for them. Keep their writes
disjoint and check every result that matters.`
	default:
		return `Two delegation paths are open.

- Codex native subagents, inside this run: for quick, read-heavy, tightly
  coupled work where shared live context is worth more than isolation.
- Child tasks as sub-issues, each in its own workflow run: for durable work,
  strict role and model pinning, nested bounded delegation, checked output,
  explicit writeFiles, steering with ` + "`/studio`" + ` comments, work that must survive
  this run, an audit trail, or low-trust participants.

Do not send one assignment down both paths unless independent redundancy is
the point. Results from either path are evidence the caller must reconcile.`
	}
}

func (p *Profile) coordinationText() string {
	c := p.Coordination
	return fmt.Sprintf(`## Coordination contract

This run is pinned to profile `+"`%s`"+`, logical hash `+"`%s`"+`. The root role is
`+"`%s`"+`. Orchestration backend: `+"`%s`"+`.

%s

Limits:
%s

Stay on the critical path. Request independent side work early, then keep
working on what does not overlap. A child existing is no reason to wait; wait
only when your next step needs its output. Treat every child result as
evidence, not authority. Settle disagreement from source, commands, tests,
specifications or other reproducible primary evidence, never by a vote of
models.
`, p.ID, hash16(p.LogicalHash), p.Root, c.Orchestration, p.backendText(), strings.Join(p.limitLines(), "\n"))
}

func (p *Profile) executionText(a Agent) string {
	if a.ExecutionMode == "goal" {
		return fmt.Sprintf(`Execution: a durable Codex goal. The token budget starts at %s and the
profile ceiling is %s. After %s seconds of silence the operator is warned; nothing
interrupts you. Once the investigation is done, the final structured turn may
take up to %s seconds. The host keeps the token count and the lifecycle state:
do not estimate elapsed time or write progress notes only to look alive. A
final message does not end an active goal. When the objective is met and no
required work remains, call `+"`update_goal`"+` with `+"`status=\"complete\"`"+` in the final
turn, then give the result. Use `+"`blocked`"+` only under the tool's repeated-impasse
rule, never for ordinary uncertainty, slow progress or a budget running low.`,
			a.GoalTokenBudget, a.MaxGoalBudget, a.StallWarningSecs, a.FinalizationSecs)
	}
	return fmt.Sprintf(`Execution: one durable Codex turn, with no wall-clock deadline from the
profile. After %s seconds of silence the operator is warned, nothing more. A
strict final repair may take up to %s seconds. Do not estimate elapsed time or
write progress notes only to look alive.`, a.StallWarningSecs, a.FinalizationSecs)
}

func agentText(p *Profile, id string) string {
	a := p.Agents[id]
	model := p.Models[a.Model]
	route := p.Routes[model.Route]
	isRoot := id == p.Root
	kind := "a delegated participant"
	if isRoot {
		kind = "the root integration authority"
	}
	var children []string
	nativeChild, durableChild := false, false
	for _, c := range a.CanSpawn {
		ca := p.Agents[c]
		desc := ca.Description
		if desc == "" {
			desc = "profile participant"
		}
		children = append(children, fmt.Sprintf("- `%s` via %s: %s", c, strings.Join(ca.Backends, "/"), desc))
		for _, b := range ca.Backends {
			nativeChild = nativeChild || b == "native"
			durableChild = durableChild || b == "mcp"
		}
	}
	if len(children) == 0 {
		children = []string{"- none"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Studio agent: %s

You are `+"`%s`"+`, %s in profile `+"`%s`"+`.

Model: `+"`%s`"+` through route `+"`%s`"+` (%s).
Trust: `+"`%s`"+`.
Verification: `+"`%s`"+`.
Highest permissions: `+"`%s`"+`.
%s

Child roles you may request, and how they run:
%s

%s`, id, id, kind, p.ID, model.UpstreamID, model.Route, route.Name, a.Trust, a.Verification, a.Permissions,
		p.executionText(a), strings.Join(children, "\n"), p.coordinationText())
	if !isRoot {
		b.WriteString(`
The parent and the root own integration and the final answer to the user.
Stay inside the delegated objective: do not widen the scope or make an
architecture or product decision nobody stated. Leave unrelated changes alone,
and return precise evidence, validation, risks and blockers.
`)
	}
	if len(a.CanSpawn) > 0 {
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
`)
	}
	if nativeChild {
		b.WriteString(`
## Native subagents

Use the profile's roles as Codex native subagents for quick, read-heavy
parallel work and closely coupled work. They share the Codex process and this
workspace: the action's write locks and output checks do not apply to them.
`)
	}
	if durableChild || len(a.Controls) > 0 {
		b.WriteString(`
## Child tasks on GitHub

Use child tasks (sub-issues) for durable work, strict model pinning, disjoint
writeFiles, checked output, nested bounded delegation, cancellation, or
low-trust roles. When you may request children, keep working on separate
parts after requesting them. Before requesting anything, look at this issue's
existing sub-issues and their ` + "`studio:status/*`" + ` labels: steer and inspect only
children you find there, never an issue number you guessed or one that a
model's output supplied. When a long-running child's state matters, read its
status comment and workflow run; silence is a warning, not a failure. Use only
the actions the control graph grants you for that child, each as a comment on
the child's issue: ` + "`/studio steer`" + ` adds direction, ` + "`/studio pause`" + ` pauses it,
` + "`/studio continue`" + ` resumes the same issue (and may raise a goal's token budget
only up to its compiled ceiling), ` + "`/studio stop`" + ` ends it and keeps the
evidence. Other granted actions (answer pending input, change an allowed
effort, interrupt the current turn, detach, compact, fork, request the final
serialization) apply only where the runtime exposes them; otherwise say the
action is unavailable. Name the head commit you last inspected in every
control: a control aimed at an older head is refused, so re-read first.

Follow a child by its labels and status comment rather than re-reading
unchanged state. Previews are short and never the whole result: read each
finished child's full pull-request diff, review, status comment and run
artifact, every page of them, before using it. Never read another run's
runner files or internal state; use the issue, pull request, checks and
artifacts. When you hold acceptance authority, accept a successful child
result with an approving review or reject it with a changes-requested review
and a concrete reason before relying on it, and merge a writable result only
after acceptance and review.

A cancelled workflow run or a lost runner does not mean lost work. After any
interruption, find the children already filed and their runs before requesting
a replacement, and continue the same issue while its objective still holds. A
replacement run first settles a turn left open by the lost one and starts at
most one continuation; a final result that landed in the meantime stands.
A provider limit, runner failure, malformed output or failed final turn stays
recorded on the same issue with its raw error and partial evidence. A provider
reset time without a timezone is provider-local or unspecified: do not invent a
timezone, and do not replace the affected role with an undeclared route.
A paused or suspended child keeps its branch, pull request and evidence and
gives its slot back; continuing it takes a fresh slot for the same issue.
Failed, stopped or cancelled children keep evidence you can inspect, but they
cannot be accepted as successful.
`)
	}
	switch {
	case len(a.CanSpawn) > 0:
		b.WriteString(`
You must read and reconcile every material result from your descendants
before you report upward.
`)
	case len(a.Controls) > 0:
		b.WriteString(`
You may control work but not create it: do not request child tasks. Use the
control graph only to unblock, correct, preserve or conclude work that another
authorized role already started.
`)
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

// cell makes a value safe inside a Markdown table cell.
func cell(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " "))
}

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
			acts := make([]string, len(a.Controls[target]))
			for i, act := range a.Controls[target] {
				acts[i] = "`" + act + "`"
			}
			controls = append(controls, fmt.Sprintf("- `%s` -> `%s`: %s", id, target, strings.Join(acts, ", ")))
		}
		if len(a.Controls) > 0 {
			hasDurableLifecycle = true
		}
		for _, ch := range a.CanSpawn {
			for _, b := range p.Agents[ch].Backends {
				if b == "mcp" {
					hasDurableLifecycle = true
				}
			}
		}
	}
	hasDurableLifecycle = hasDurableLifecycle && c.usesDurable()

	var pathKind, paths string
	switch c.Orchestration {
	case "native":
		pathKind = "Codex native subagents"
		paths = `- Run the profile's roles as Codex native subagents for quick, read-heavy,
  tightly coupled work. Keep their writes disjoint: the action does not enforce
  write scopes or output checks for native subagents.
- Child tasks as sub-issues are not available in this profile.`
	case "mcp":
		pathKind = "child tasks filed as sub-issues"
		paths = `- Request child tasks in your final report; the action files them as
  sub-issues and runs each in its own workflow run. Tool servers Codex can call
  provide capabilities; they do not start agents. The action owns lineage,
  slots, issue state, cancellation, output checks and result decisions.
- Codex native subagents are not available in this profile.`
	default:
		pathKind = "Codex native subagents or child tasks filed as sub-issues"
		paths = `- Run native roles as Codex native subagents for quick, read-heavy, tightly
  coupled work. Keep their writes disjoint: the action does not enforce write
  scopes or output checks for native subagents.
- Request durable roles as child tasks in your final report; the action files
  them as sub-issues and runs each in its own workflow run. Tool servers Codex
  can call provide capabilities; they do not start agents. The action owns
  lineage, slots, issue state, cancellation, output checks and result
  decisions.
- Do not send one assignment down both paths unless independent reproduction
  or adversarial diversity is the stated goal.`
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
`+"`none`"+`. A control-only role must not request children; it uses the lifecycle
and the control graph below only at a real dependency, correction or risk
boundary.

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
`, SkillName, p.ID, pathKind, paths)
	if hasDurableLifecycle {
		b.WriteString(`
## Child-task lifecycle

For each child task, give an objective, the context and paths it needs,
non-goals, the deliverable it must return, and the validation evidence
expected; these go into the sub-issue's task block. List independent children
together in one report; one child is one entry.

Stay productive while children run. Check on them only when it helps, and wait
only at a real dependency. Follow each child by its status label and status
comment, which change when its durable state changes, instead of re-reading
what has not changed. Previews are optional, short and never the whole result:
read every finished child's pull-request diff, review, status comment and run
artifact in full, page by page, in order, without gaps. Never go around this by
opening another run's runner files, logs or internal state; use the issue,
pull request, checks and artifacts. Being able to read a file does not make it
an authority.

Start from the sub-issues already filed and their workflow runs. After any
interruption, find and inspect the retained work before requesting a
replacement, and continue the same issue while its objective still holds.
Controls are compare-and-swap: inspect first and name the head commit you saw;
a control aimed at an older head is refused. ` + "`/studio steer`" + ` adds direction to
the current work without replacing its task. ` + "`/studio pause`" + ` pauses a goal,
interrupts the turn, keeps partial evidence and gives the slot back.
` + "`/studio continue`" + ` resumes recoverable work on the same issue, and may raise
its token budget only up to the compiled ceiling. ` + "`/studio stop`" + ` pauses,
interrupts, keeps the evidence and releases the child's slot and locks.
Interrupting only the current turn, answering a pending request, final
serialization, compaction, setting effort within the grant, and forking are
used only where the runtime offers them; a fork is a new child task with its
own slot and its own writeFiles.

Accept a successful child with an approving review on its pull request, or
reject it with a changes-requested review and a concrete reason, when your role
holds that authority. A paused child keeps its branch, pull request, partial
evidence and artifact while its slot is free; a suspended child keeps the same
evidence, and continuing it takes exactly one new run for that issue after a
fresh slot is granted. Failed, stopped and cancelled children cannot be
accepted or rejected as results; keep their status and uncertainty visible.
Merge an accepted writable result only after checking its scope and tests.
Cancel only work that is stale, superseded, unsafe or no longer worth its
cost; cancelling is immediate and different from stopping with evidence kept.

Each child task is one workflow run with its own branch; a continuation is a
new run for the same issue, never a second issue. A replacement run first
settles a turn left open by a lost one and starts at most one continuation; a
final result that landed meanwhile stands. Goal roles are bounded by Codex
token accounting; turn roles have no task wall clock. Stall intervals only warn,
and a slow provider or model does not erase work. Do not ask a model to watch
a clock or write periodic progress notes. Strict output contracts apply to the
final serialization turn, followed by at most one repair on the same thread.

Settle conflicts with primary evidence, not by vote or model reputation. A
failed child, a suspended budget, an unavailable route or a malformed result is
explicit uncertainty, not permission to quietly switch to another route.
`)
	}
	if len(controls) > 0 {
		b.WriteString("\n## Control graph\n\n" + strings.Join(controls, "\n") + "\n")
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
