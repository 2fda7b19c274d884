package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
	"gopkg.in/yaml.v3"
)

// A plain request: `/studio run` on an issue with neither a ```studio block nor a submitted issue
// form runs a read-only planning pass whose answer is a proposed task block, and `/studio accept`
// appends the latest proposal to the issue body. Nothing is written to the repository before the
// issue holds a block: the proposal is a comment, the block a writer's edit of the issue.

// proposalRole is the role that plans a plain request when no `role/<id>` label names one.
const proposalRole = "producer"

// ProposalSchema is the JSON Schema the planning pass answers with (--output-schema). As for the
// review, strict structured output wants every property required and no extra keys, so "no
// verification" is null. Codex does not enforce the schema: ParseProposal checks every answer.
const ProposalSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["role", "writeFiles", "files", "verify", "summary"],
  "properties": {
    "role": {"type": "string", "description": "the studio role id that should do the work"},
    "writeFiles": {"type": "array", "items": {"type": "string"}, "description": "repository-relative paths or globs the implementation may change"},
    "files": {"type": "array", "items": {"type": "string"}, "description": "existing repository paths to read for context"},
    "verify": {
      "anyOf": [
        {
          "type": "object",
          "additionalProperties": false,
          "required": ["command", "args"],
          "properties": {
            "command": {"type": "string", "description": "the program, run without a shell"},
            "args": {"type": "array", "items": {"type": "string"}}
          }
        },
        {"type": "null"}
      ]
    },
    "summary": {"type": "string", "description": "two or three sentences for the issue's readers"}
  }
}
`

// Bounds on a proposal: far above any sensible task, low enough that an answer cannot flood the
// issue.
const (
	maxProposalPaths   = 50
	maxProposalString  = 300
	maxProposalSummary = 2_000
)

// Proposal is a validated task block proposal.
type Proposal struct {
	Task policy.Task // as policy.ParseTask reads Block: writeFiles and files cleaned
	// Block is the ```studio fenced block, exactly as posted and appended by `/studio accept`.
	Block string
	// Summary is the model's explanation: untrusted, shown only as quoted text.
	Summary string
}

// ProposalRules are what an answer must agree with besides the task parser's rules.
type ProposalRules struct {
	// LabelRole is the role the issue's `role/<id>` label names, "" when none: a proposal must
	// agree with it (an empty role takes it), or the run would refuse the conflict.
	LabelRole string
	// Engine is the project's engine: another engine's specialist is refused, as a run would.
	Engine string
	// Known says which role ids exist (Roles.Lookup of the default branch); nil knows the
	// built-in roles only.
	Known func(id string) bool
}

func (r ProposalRules) known(id string) bool {
	if r.Known != nil {
		return r.Known(id)
	}
	return prompts.IsBuiltinRole(id)
}

// proposalFields are the answer's keys, all required and no others (ProposalSchema).
var proposalFields = []string{"role", "writeFiles", "files", "verify", "summary"}

// ParseProposal validates a planning pass's final message strictly: one JSON object with exactly
// the schema's keys and types, a built-in role that agrees with the rules, then the task parser's
// own rules on the rendered block (policy.ParseTask), so writeFiles and files are cleaned and a
// path with `..`, into `.git` or absolute is refused exactly as in an issue. The error says what
// was wrong, in words for the status comment.
func ParseProposal(finalMessage string, rules ProposalRules) (Proposal, error) {
	text := strings.TrimSpace(finalMessage)
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return Proposal{}, errors.New("the answer holds no JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err != nil {
		return Proposal{}, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	for _, k := range proposalFields {
		if _, ok := raw[k]; !ok {
			return Proposal{}, fmt.Errorf("the answer lacks the field %q", k)
		}
	}
	for k := range raw {
		if !contains(proposalFields, k) {
			return Proposal{}, fmt.Errorf("the answer has the unknown field %q", oneLine(k, 50))
		}
	}
	var role, summary string
	var writeFiles, files []string
	if err := decodeStrict(raw["role"], &role); err != nil {
		return Proposal{}, errors.New("`role` must be a string")
	}
	if err := decodeStrictList(raw["writeFiles"], &writeFiles); err != nil {
		return Proposal{}, fmt.Errorf("`writeFiles` %v", err)
	}
	if err := decodeStrictList(raw["files"], &files); err != nil {
		return Proposal{}, fmt.Errorf("`files` %v", err)
	}
	if err := decodeStrict(raw["summary"], &summary); err != nil {
		return Proposal{}, errors.New("`summary` must be a string")
	}
	verify, err := decodeVerify(raw["verify"])
	if err != nil {
		return Proposal{}, err
	}

	role = strings.TrimSpace(role)
	switch {
	case rules.LabelRole != "" && role == "":
		role = rules.LabelRole
	case rules.LabelRole != "" && role != rules.LabelRole:
		return Proposal{}, fmt.Errorf("`role`: the answer names %s but the issue's role label names `%s`", codeSpan(role), rules.LabelRole)
	case role == "":
		return Proposal{}, errors.New("`role` is empty")
	}
	if !rules.known(role) {
		return Proposal{}, fmt.Errorf("`role`: %s is not a studio role", codeSpan(role))
	}
	if msg := prompts.WrongEngineMessage(role, rules.Engine); msg != "" {
		return Proposal{}, errors.New("`role`: " + msg)
	}
	for _, s := range append(append(append([]string{}, writeFiles...), files...), verifyWords(verify)...) {
		if utf8.RuneCountInString(s) > maxProposalString {
			return Proposal{}, fmt.Errorf("a value is longer than %d characters", maxProposalString)
		}
	}
	if verify != nil {
		for _, s := range verifyWords(verify) {
			if strings.IndexFunc(s, unicode.IsControl) >= 0 {
				return Proposal{}, errors.New("`verify`: the command or an argument contains control characters")
			}
		}
	}

	// The task parser's rules, on the block as it would stand in an issue; then the block is
	// rendered again from what the parser read (cleaned paths), and that is what is posted.
	first, err := renderTaskBlock(role, writeFiles, files, verify)
	if err != nil {
		return Proposal{}, err
	}
	task, err := policy.ParseTask(first)
	if err == nil {
		err = policy.CheckWriteFiles(task, role)
	}
	if err != nil {
		return Proposal{}, taskProblem(err)
	}
	block, err := renderTaskBlock(task.Role, task.WriteFiles, task.Files, task.Verify)
	if err != nil {
		return Proposal{}, err
	}
	if task, err = policy.ParseTask(block); err != nil {
		return Proposal{}, taskProblem(err)
	}
	summary = strings.TrimSpace(summary)
	if r := []rune(summary); len(r) > maxProposalSummary {
		summary = string(r[:maxProposalSummary]) + "…"
	}
	return Proposal{Task: task, Block: block, Summary: summary}, nil
}

// taskProblem words a task-parser error on a rendered block: its line numbers are the block's,
// not the issue's, so only the field and the message are kept.
func taskProblem(err error) error {
	var te *policy.TaskError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Errorf("`%s`: %s", te.Field, te.Message)
		}
		return errors.New(te.Message)
	}
	return err
}

func decodeStrict(data json.RawMessage, dst any) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return errors.New("null")
	}
	return json.Unmarshal(data, dst)
}

func decodeStrictList(data json.RawMessage, dst *[]string) error {
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) || json.Unmarshal(data, dst) != nil {
		return errors.New("must be an array of strings")
	}
	if len(*dst) > maxProposalPaths {
		return fmt.Errorf("lists %d entries; at most %d", len(*dst), maxProposalPaths)
	}
	return nil
}

// decodeVerify reads `verify`: null, or exactly {command, args}. A command and args both empty
// is read as null: a model asked to fill every field sometimes says "none" that way.
func decodeVerify(data json.RawMessage) (*policy.Verification, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) || json.Unmarshal(data, &raw) != nil {
		return nil, errors.New("`verify` must be null or an object {command, args}")
	}
	for k := range raw {
		if k != "command" && k != "args" {
			return nil, fmt.Errorf("`verify` has the unknown field %q", oneLine(k, 50))
		}
	}
	var v policy.Verification
	cmd, ok := raw["command"]
	if !ok || decodeStrict(cmd, &v.Command) != nil {
		return nil, errors.New("`verify.command` must be a string")
	}
	args, ok := raw["args"]
	if !ok {
		return nil, errors.New("`verify.args` must be an array of strings")
	}
	if err := decodeStrictList(args, &v.Args); err != nil {
		return nil, fmt.Errorf("`verify.args` %v", err)
	}
	if strings.TrimSpace(v.Command) == "" && len(v.Args) == 0 {
		return nil, nil
	}
	return &v, nil
}

func verifyWords(v *policy.Verification) []string {
	if v == nil {
		return nil
	}
	return append([]string{v.Command}, v.Args...)
}

// taskBlockYAML is the block's content: the fields a proposal sets, lists in flow style as the
// README writes them. yaml.v3 quotes every value that would read as something else.
type taskBlockYAML struct {
	Role          string         `yaml:"role"`
	WriteFiles    []string       `yaml:"writeFiles,flow"`
	Files         []string       `yaml:"files,omitempty,flow"`
	Verify        *verifyYAML    `yaml:"verify,omitempty"`
	ApprovalScope []string       `yaml:"approvalScope,omitempty,flow"`
	RunPolicy     *runPolicyYAML `yaml:"runPolicy,omitempty"`
}

type runPolicyYAML struct {
	Review       *bool `yaml:"review,omitempty"`
	MaxFixPasses *int  `yaml:"maxFixPasses,omitempty"`
}

// TaskBlock writes a task as the ```studio block an issue holds, for a task made outside an
// issue (the local `studio run`): the block is then read back by the same parser as any issue's.
func TaskBlock(t policy.Task) (string, error) {
	doc := taskBlockYAML{Role: t.Role, WriteFiles: t.WriteFiles, Files: t.Files, ApprovalScope: t.ApprovalScope}
	if t.WriteFiles == nil {
		doc.WriteFiles = []string{}
	}
	if t.Verify != nil {
		doc.Verify = &verifyYAML{Command: t.Verify.Command, Args: t.Verify.Args}
	}
	if t.RunPolicy.Review != nil || t.RunPolicy.MaxFixPasses != nil {
		doc.RunPolicy = &runPolicyYAML{Review: t.RunPolicy.Review, MaxFixPasses: t.RunPolicy.MaxFixPasses}
	}
	return encodeBlock(doc)
}

type verifyYAML struct {
	Command string   `yaml:"command"`
	Args    []string `yaml:"args,omitempty,flow"`
}

// renderTaskBlock writes the ```studio fenced block (fenced: a longer fence when a value holds
// backticks), ending without a newline.
func renderTaskBlock(role string, writeFiles, files []string, verify *policy.Verification) (string, error) {
	doc := taskBlockYAML{Role: role, WriteFiles: writeFiles, Files: files}
	if verify != nil {
		doc.Verify = &verifyYAML{Command: verify.Command, Args: verify.Args}
	}
	return encodeBlock(doc)
}

func encodeBlock(doc taskBlockYAML) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("render the task block: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("render the task block: %w", err)
	}
	return fenced(b.String(), "studio"), nil
}

// proposalMarker opens the bot's reply holding a proposal; `/studio accept` trusts it only in a
// comment the bot wrote.
func proposalMarker(issue int) string { return fmt.Sprintf("<!-- studio:proposal issue=%d -->", issue) }

var proposalMarkerRE = regexp.MustCompile(`^<!-- studio:proposal issue=([0-9]+) -->`)

// proposalInstruction closes the planning pass's prompt.
func proposalInstruction(labelRole string, roles []string) string {
	var b strings.Builder
	b.WriteString("\n\n## Task block proposal\n")
	b.WriteString("The issue above has no `studio` task block, so nothing can be implemented yet. This is a read-only planning pass: change no file. ")
	b.WriteString("Read the repository as you need to, then propose the task block a writer can add to the issue, as one JSON object matching the output schema:\n\n")
	if labelRole != "" {
		fmt.Fprintf(&b, "- `role`: `%s` (the issue's role label names it).\n", labelRole)
	} else {
		fmt.Fprintf(&b, "- `role`: the studio role that should do the work, one of: %s.\n", strings.Join(roles, ", "))
	}
	b.WriteString("- `writeFiles`: the repository paths (or globs such as `src/player/**`) the work may change, as few as the request needs; relative to the repository root, no `..`, nothing under `.git`. Only these paths will ever be committed.\n")
	b.WriteString("- `files`: existing repository files worth reading for context, or [].\n")
	b.WriteString("- `verify`: a command that checks the work, run without a shell (`command` and `args`), such as the project's test runner when the repository has one; null when there is none.\n")
	b.WriteString("- `summary`: two or three sentences for the issue's readers: what the task is and why these paths.\n")
	return b.String()
}

// propose is `/studio run` on a plain request: a read-only Codex call on the default branch's
// checkout, as the planning role, answers with a task block proposal; a valid one is posted as a
// reply, a malformed one is reported on the status comment. The issue ends awaiting a writer.
func (r *run) propose(ctx context.Context, tc taskContext) error {
	cfg, base := tc.cfg, tc.base
	labels := r.labelRoles()
	planner, labelRole := proposalRole, ""
	switch {
	case len(labels) > 1:
		return r.block(ctx, stepTaskParsed, severalRoleLabels(labels, proposalRole))
	case len(labels) == 1:
		labelRole, planner = labels[0], labels[0]
	}
	roles, err := r.roles(ctx, base)
	if err != nil {
		return r.block(ctx, stepTaskParsed, err.Error())
	}
	if _, ok := roles.Lookup(planner); !ok {
		return r.block(ctx, stepTaskParsed, roles.UnknownRoleMessage(planner))
	}
	r.st.set(stepTaskParsed, StepDone, proposalTaskDetail(planner))
	if r.cmd.runOptions().DryRun {
		r.st.Summary = proposalDryRun(r.TriggerPhrase, planner)
		r.st.set(stepCodex, StepSkipped, detailDryRun)
		r.out.Status, r.out.Summary = "done", r.st.Summary
		return r.publish(ctx)
	}
	tc.task = policy.Task{Role: planner, Description: r.issue.Body}
	// The plan phase's eligibility: read-only, whatever the studio mode or constrained-sandbox say.
	elig := policy.Evaluate(policy.EligibilityInput{ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, Phase: policy.PhasePlan})
	elig.CodexSandbox = policy.SandboxReadOnly
	rr, stop, err := r.prepareStep(ctx, tc, policy.PhasePlan, elig, false, false)
	if stop || err != nil {
		return err
	}
	route, prepared := rr.routes, rr.prepared
	if note := prepared.Stripped.Summary(); note != "" {
		r.st.set(stepTaskParsed, StepDone, r.st.detail(stepTaskParsed)+"; "+note)
	}
	prompt, err := r.withGuidance(ctx, base, planner, route.Implementation, prepared.Prompt+proposalInstruction(labelRole, prompts.ActiveRolesFor(string(cfg.Mode), cfg.Engine)))
	if err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			return r.block(ctx, stepTaskParsed, ge.msg)
		}
		return err
	}
	impl := route.Implementation.Primary
	callLine := planningPassDetail(impl.Model, impl.Effort)
	r.st.set(stepCodex, StepPending, callLine)
	if err := r.publish(ctx); err != nil {
		return err
	}

	exe, ev, err := r.codexStep(ctx, singleStep{folder: planner + "-proposal", label: "proposal", phase: string(policy.PhasePlan),
		prompt: prompt, sandbox: string(policy.SandboxReadOnly), schema: ProposalSchema, route: route.Implementation})
	if err != nil {
		return err
	}
	// The read-only sandbox should make changes impossible; nothing is committed here anyway.
	if changes, err := r.revertChanges(ctx); err != nil {
		return err
	} else if len(changes) > 0 {
		r.logf("::warning::the planning pass changed %d path(s); they were discarded", len(changes))
	}
	res := exe.Result
	if ref := r.refused(exe); ref != nil {
		return r.endRefused(ctx, ref, r.TriggerPhrase+" run", false)
	}
	if res.Failed() {
		r.st.Summary = codexFailureSummary(res)
		return r.block(ctx, stepCodex, planningFailed(r.TriggerPhrase))
	}
	p, perr := ParseProposal(res.FinalMessage, ProposalRules{LabelRole: labelRole, Engine: cfg.Engine, Known: func(id string) bool { _, ok := roles.Lookup(id); return ok }})
	if perr != nil {
		_ = ev.Write("proposal-malformed.txt", []byte(perr.Error()+"\n\n"+res.FinalMessage))
		r.st.Summary = unusableAnswer(r.Redactor.Redact(quotedAnswer(res.FinalMessage)))
		return r.block(ctx, stepCodex, unusableProposal(perr.Error(), r.TriggerPhrase))
	}
	_ = ev.Write("proposal.md", []byte(p.Block+"\n"))
	r.st.set(stepCodex, StepDone, callLine)

	reply := r.Redactor.Redact(proposalReply(r.TriggerPhrase, r.tr.Actor.Login, r.cmd.Line, planner, r.tr.Issue, p))
	if _, err := r.gh.CreateComment(ctx, r.tr.Issue, reply); err != nil {
		return err
	}
	r.st.set(stepCommitted, StepSkipped, detailNoTaskBlockYet)
	r.st.set(stepPull, StepSkipped, detailNoTaskBlockYet)
	r.st.set(stepVerdict, StepPending, verdictDetail("awaiting a task block"))
	r.st.Summary = proposedSummary(r.TriggerPhrase, p.Task.Role, p.Task.WriteFiles) + leftoversNote(exe.Leftovers())
	r.out.Status, r.out.Summary = statusAwaitingApproval, r.st.Summary
	if err := r.setStatusLabel(ctx, statusAwaitingApproval); err != nil {
		return err
	}
	return r.publish(ctx)
}

// latestProposal returns the most recent reply of the bot holding a proposal for issue. A marker
// in anyone else's comment is ignored: only the bot's own proposals can be accepted.
func latestProposal(comments []hub.Comment, issue int, botLogin string) (hub.Comment, bool) {
	var found hub.Comment
	ok := false
	for _, c := range comments {
		if !strings.EqualFold(c.Author, botLogin) {
			continue
		}
		m := proposalMarkerRE.FindStringSubmatch(c.Body)
		if m == nil || m[1] != fmt.Sprint(issue) {
			continue
		}
		found, ok = c, true
	}
	return found, ok
}

// proposedBlock reads the one visible ```studio block of a proposal reply and checks it with the
// task parser again, since a writer can edit the bot's comment.
func proposedBlock(body string, known func(id string) bool) (string, policy.Task, error) {
	lines := policy.SplitLines(body)
	var block []string
	for _, f := range policy.ScanMarkdown(body).Fences {
		if !f.TopLevel || f.Info != "studio" {
			continue
		}
		if block != nil || f.Close == 0 {
			return "", policy.Task{}, errors.New("it does not hold exactly one complete task block")
		}
		block = lines[f.Open-1 : f.Close]
	}
	if block == nil {
		return "", policy.Task{}, errors.New("it holds no task block")
	}
	text := strings.Join(block, "\n")
	task, err := policy.ParseTask(text)
	if err != nil {
		return "", policy.Task{}, taskProblem(err)
	}
	if !known(task.Role) {
		return "", policy.Task{}, fmt.Errorf("its role %s is not a studio role", codeSpan(task.Role))
	}
	return text, task, nil
}

// appendBlock is the issue body with the block added after it, a blank line between.
func appendBlock(body, block string) string {
	body = strings.TrimRight(body, "\r\n\t ")
	if body == "" {
		return block + "\n"
	}
	return body + "\n\n" + block + "\n"
}

// sameTask compares the fields a block sets.
func sameTask(a, b policy.Task) bool {
	a.Description, a.Line, b.Description, b.Line = "", 0, "", 0
	return reflect.DeepEqual(a, b)
}
