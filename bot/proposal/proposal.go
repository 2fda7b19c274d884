package proposal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
	"gopkg.in/yaml.v3"
)

// A plain request: `/studio run` on an issue with neither a ```studio block nor a submitted issue
// form runs a read-only planning pass whose answer is a proposed task block, and `/studio accept`
// appends the latest proposal to the issue body. Nothing is written to the repository before the
// issue holds a block: the proposal is a comment, the block a writer's edit of the issue.

// proposalRole is the role that plans a plain request when no `role/<id>` label names one.
const Role = "producer"

// Schema is the JSON Schema the planning pass answers with (--output-schema). As for the
// review, strict structured output wants every property required and no extra keys, so "no
// verification" is null. Codex does not enforce the schema: Parse checks every answer.
const Schema = `{
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

// Rules are what an answer must agree with besides the task parser's rules.
type Rules struct {
	// LabelRole is the role the issue's `role/<id>` label names, "" when none: a proposal must
	// agree with it (an empty role takes it), or the run would refuse the conflict.
	LabelRole string
	// Engine is the project's engine: another engine's specialist is refused, as a run would.
	Engine string
	// Known says which role ids exist (Roles.Lookup of the default branch); nil knows the
	// built-in roles only.
	Known func(id string) bool
}

func (r Rules) known(id string) bool {
	if r.Known != nil {
		return r.Known(id)
	}
	return prompts.IsBuiltinRole(id)
}

// proposalFields are the answer's keys, all required and no others (Schema).
var proposalFields = []string{"role", "writeFiles", "files", "verify", "summary"}

// Parse validates a planning pass's final message strictly: one JSON object with exactly
// the schema's keys and types, a built-in role that agrees with the rules, then the task parser's
// own rules on the rendered block (policy.ParseTask), so writeFiles and files are cleaned and a
// path with `..`, into `.git` or absolute is refused exactly as in an issue. The error says what
// was wrong, in words for the status comment.
func Parse(finalMessage string, rules Rules) (Proposal, error) {
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
		if !slices.Contains(proposalFields, k) {
			return Proposal{}, fmt.Errorf("the answer has the unknown field %q", texts.OneLine(k, 50))
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
		return Proposal{}, fmt.Errorf("`role`: the answer names %s but the issue's role label names `%s`", texts.CodeSpan(role), rules.LabelRole)
	case role == "":
		return Proposal{}, errors.New("`role` is empty")
	}
	if !rules.known(role) {
		return Proposal{}, fmt.Errorf("`role`: %s is not a studio role", texts.CodeSpan(role))
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
			return nil, fmt.Errorf("`verify` has the unknown field %q", texts.OneLine(k, 50))
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
	DependsOn     []string       `yaml:"dependsOn,omitempty,flow"`
	Priority      int            `yaml:"priority,omitempty"`
	Verify        *verifyYAML    `yaml:"verify,omitempty"`
	ApprovalScope []string       `yaml:"approvalScope,omitempty,flow"`
	RunPolicy     *runPolicyYAML `yaml:"runPolicy,omitempty"`
	WorkflowID    string         `yaml:"workflowId,omitempty"`
	GroupID       string         `yaml:"groupId,omitempty"`
	AllowHosts    []string       `yaml:"allowHosts,omitempty,flow"`
}

type runPolicyYAML struct {
	Review       *bool  `yaml:"review,omitempty"`
	MaxFixPasses *int   `yaml:"maxFixPasses,omitempty"`
	ModelTier    string `yaml:"modelTier,omitempty"`
	// ConstrainedSandbox keeps a block's own choice.
	ConstrainedSandbox *bool `yaml:"constrainedSandbox,omitempty"`
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
	return texts.Fenced(b.String(), "studio"), nil
}

// proposalMarker opens the bot's reply holding a proposal; `/studio accept` trusts it only in a
// comment the bot wrote.
func Marker(issue int) string { return fmt.Sprintf("<!-- studio:proposal issue=%d -->", issue) }

var markerRE = regexp.MustCompile(`^<!-- studio:proposal issue=([0-9]+) -->`)

// Instruction closes the planning pass's prompt. completing: the issue's task block exists but,
// for a writing role, names no writeFiles (a recipe's step), so the proposal completes it.
func Instruction(labelRole string, roles []string, completing bool) string {
	var b strings.Builder
	b.WriteString("\n\n## Task block proposal\n")
	if completing {
		b.WriteString("The issue's `studio` task block names no `writeFiles`, so nothing can be implemented yet. This is a read-only planning pass: change no file. ")
	} else {
		b.WriteString("The issue above has no `studio` task block, so nothing can be implemented yet. This is a read-only planning pass: change no file. ")
	}
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

// latestProposal returns the most recent reply of the bot holding a proposal for issue. A marker
// in anyone else's comment is ignored: only the bot's own proposals can be accepted.
func Latest(comments []hub.Comment, issue int, botLogin string) (hub.Comment, bool) {
	var found hub.Comment
	ok := false
	for _, c := range comments {
		if !strings.EqualFold(c.Author, botLogin) {
			continue
		}
		m := markerRE.FindStringSubmatch(c.Body)
		if m == nil || m[1] != fmt.Sprint(issue) {
			continue
		}
		found, ok = c, true
	}
	return found, ok
}

// proposedBlock reads the one visible ```studio block of a proposal reply and checks it with the
// task parser again, since a writer can edit the bot's comment.
func ProposedBlock(body string, known func(id string) bool) (string, policy.Task, error) {
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
		return "", policy.Task{}, fmt.Errorf("its role %s is not a studio role", texts.CodeSpan(task.Role))
	}
	return text, task, nil
}

// Complete is the issue's task block (existing, whose only lack is writeFiles) with the
// proposal's writeFiles, its files added to the block's own and its verification where the block
// has none: everything else the block says (its dependencies, workflow, group, priority, run
// policy, hosts) stays as it was.
func Complete(existing, proposed policy.Task) (string, policy.Task, error) {
	t := existing.WithWriteFiles(proposed.WriteFiles)
	for _, f := range proposed.Files {
		if !slices.Contains(t.Files, f) {
			t.Files = append(t.Files, f)
		}
	}
	if t.Verify == nil {
		t.Verify = proposed.Verify
	}
	doc := taskBlockYAML{Role: t.Role, WriteFiles: t.WriteFiles, Files: t.Files, ApprovalScope: t.ApprovalScope,
		DependsOn: t.DependsOn, Priority: t.Priority, WorkflowID: t.WorkflowID, GroupID: t.GroupID, AllowHosts: t.AllowHosts}
	if t.Verify != nil {
		doc.Verify = &verifyYAML{Command: t.Verify.Command, Args: t.Verify.Args}
	}
	if t.RunPolicy != (policy.RunPolicy{}) {
		doc.RunPolicy = &runPolicyYAML{Review: t.RunPolicy.Review, MaxFixPasses: t.RunPolicy.MaxFixPasses, ModelTier: t.RunPolicy.ModelTier, ConstrainedSandbox: t.RunPolicy.ConstrainedSandbox}
	}
	block, err := encodeBlock(doc)
	return block, t, err
}

// ReplaceBlock is the issue body with its one top-level ```studio block replaced by block, the
// text around it untouched; ok false when the body does not hold exactly one.
func ReplaceBlock(body, block string) (string, bool) {
	lines := policy.SplitLines(body)
	var open, close int
	for _, f := range policy.ScanMarkdown(body).Fences {
		if !f.TopLevel || f.Info != "studio" {
			continue
		}
		if open != 0 || f.Close == 0 {
			return "", false
		}
		open, close = f.Open, f.Close
	}
	if open == 0 {
		return "", false
	}
	out := append(append(slices.Clone(lines[:open-1]), strings.Split(block, "\n")...), lines[close:]...)
	return strings.Join(out, "\n"), true
}

// Place puts an accepted proposal's block in the issue body: after it, or (completing) in place
// of the block it completes, only when that block is the same writing role's. ok false when it
// cannot be placed.
func Place(body, block string, completing bool, blockRole, proposedRole string, writes bool) (string, bool) {
	if !completing {
		return AppendBlock(body, block), true
	}
	if !writes || (blockRole != "" && blockRole != proposedRole) {
		return "", false
	}
	return ReplaceBlock(body, block)
}

// appendBlock is the issue body with the block added after it, a blank line between.
func AppendBlock(body, block string) string {
	body = strings.TrimRight(body, "\r\n\t ")
	if body == "" {
		return block + "\n"
	}
	return body + "\n\n" + block + "\n"
}

// sameTask compares the fields a block sets.
func SameTask(a, b policy.Task) bool {
	a.Description, a.Line, b.Description, b.Line = "", 0, "", 0
	return reflect.DeepEqual(a, b)
}
