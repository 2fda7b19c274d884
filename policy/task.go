package policy

import (
	"github.com/codex-studio/studio-action/policy/egress"
	"github.com/codex-studio/studio-action/policy/suggest"
	"slices"

	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Verification is a command run without a shell after Codex changes files.
type Verification struct {
	Command string   `yaml:"command" json:"command"`
	Args    []string `yaml:"args" json:"args"`
}

// RunPolicy tunes the review/fix loop for one task.
type RunPolicy struct {
	Review       *bool `yaml:"review" json:"review,omitempty"`
	MaxFixPasses *int  `yaml:"maxFixPasses" json:"maxFixPasses,omitempty"`
	// ConstrainedSandbox asks for Codex's workspace-write sandbox in writing phases (seed
	// StudioTaskRunPolicy). It can only tighten: the action's constrained-sandbox input set wins,
	// and a task cannot loosen it.
	ConstrainedSandbox *bool  `yaml:"constrainedSandbox" json:"constrainedSandbox,omitempty"`
	ModelTier          string `yaml:"modelTier" json:"modelTier,omitempty"`
}

// Constrained reports whether the task asks for the constrained sandbox.
func (p RunPolicy) Constrained() bool { return p.ConstrainedSandbox != nil && *p.ConstrainedSandbox }

// runPolicyFields are RunPolicy's keys, for the error on an unknown one.
const runPolicyFields = "review, maxFixPasses, constrainedSandbox, modelTier"

// Task is the studio task block of an issue (DESIGN §3): the seed's task fields in YAML.
type Task struct {
	Role       string   `yaml:"role" json:"role,omitempty"`
	WriteFiles []string `yaml:"writeFiles" json:"writeFiles"`
	Files      []string `yaml:"files" json:"files,omitempty"`
	// DependsOn lists the issues this task waits for, normalized to "#N" whatever shape the block
	// gave them in (see depRefs); Dependencies gives their numbers. The block's key is dependsOn
	// or, as in the seed's task store, dependencies.
	DependsOn     []string      `yaml:"-" json:"dependsOn,omitempty"`
	Priority      int           `yaml:"priority" json:"priority,omitempty"`
	Verify        *Verification `yaml:"verify" json:"verify,omitempty"`
	RunPolicy     RunPolicy     `yaml:"runPolicy" json:"runPolicy"`
	ApprovalScope []string      `yaml:"approvalScope" json:"approvalScope,omitempty"`
	WorkflowID    string        `yaml:"workflowId" json:"workflowId,omitempty"`
	GroupID       string        `yaml:"groupId" json:"groupId,omitempty"`
	// AllowHosts are hosts the task needs besides the run's allow-list (egress.ParseRule
	// entries); they count only as egress.TaskHostsCount allows.
	AllowHosts []string `yaml:"allowHosts" json:"allowHosts,omitempty"`

	// Description is the issue text outside the block: untrusted, quoted input for Codex.
	Description string `yaml:"-" json:"-"`
	// Line is the body line on which the block's fence opens (1-based), for error messages; for an
	// issue form, the line of its first `### <field>` heading.
	Line int `yaml:"-" json:"-"`

	// noWriteFiles is the error a missing writeFiles is for a role that may write; the parser
	// cannot tell (the role may come from a label), so CheckWriteFiles returns it once the role
	// is resolved.
	noWriteFiles *TaskError
}

// WithWriteFiles is the task with writeFiles set (a proposal completing a block that had none).
func (t Task) WithWriteFiles(paths []string) Task {
	t.WriteFiles, t.noWriteFiles = paths, nil
	return t
}

// RoleWrites reports whether runs of role may change files: its phase (PhaseForRole) is a
// mutating one. Producer (plan) and qa-playtester (review) never write; their report is the
// deliverable.
func RoleWrites(role string) bool { return PhaseForRole(role).Mutating() }

// CheckWriteFiles is the writeFiles rule, applied where the role is resolved: a role that may
// write needs at least one writeFiles path; a read-only role needs none (any it lists is
// ignored, since it may change nothing).
func CheckWriteFiles(task Task, role string) error { return checkWriteFiles(task, RoleWrites(role)) }

// checkWriteFiles is CheckWriteFiles for a role whose writing is known (ResolveRole knows it from
// the role's phase, which for a custom role is not PhaseForRole's).
func checkWriteFiles(task Task, writes bool) error {
	if len(task.WriteFiles) > 0 || !writes {
		return nil
	}
	if task.noWriteFiles != nil {
		e := *task.noWriteFiles
		return &e
	}
	return &TaskError{Line: task.Line, Field: "writeFiles", Message: writeFilesRequired}
}

// MissingWriteFiles reports whether err is a writing role's task block that names no writeFiles
// (and nothing else wrong with it): a run proposes them for a writer to accept instead of
// refusing (a recipe's steps are made so).
func MissingWriteFiles(err error) bool {
	var te *TaskError
	return errors.As(err, &te) && te.Field == "writeFiles" && te.Message == writeFilesRequired
}

const writeFilesRequired = "is required for a role that writes and must list at least one repository path or glob Codex may change (only producer and qa-playtester, which change nothing, may leave it out)"

// TaskError is a task-block problem the reply explains: which field, which line, what to do.
type TaskError struct {
	Line    int    // 1-based line in the issue body; 0 when the problem is not tied to a line
	Field   string // the offending key, when there is one
	Message string
}

func (e *TaskError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "`%s`: ", e.Field)
	}
	b.WriteString(e.Message)
	return b.String()
}

// ErrNoTaskBlock means the issue body holds no ```studio block and is no studio issue form.
var ErrNoTaskBlock = errors.New("the issue body has no ```studio task block; add one with at least `writeFiles: [path, ...]` (see the README's task block section), or open the issue from the studio task form")

// ParseTask finds the single ```studio block an issue body shows and decodes it; a body without
// one may be a submitted studio issue form instead (parseTaskForm), read by its field labels. Only a block a
// reader can see counts (ScanMarkdown): one inside an HTML comment, nested in another fence,
// indented as code, quoted or in a list item is ignored and stays part of the description. Two
// visible blocks, unknown keys, wrong types and unsafe writeFiles are errors naming the field and
// body line. A missing writeFiles is not an error here: whether the role writes is known only once
// it is resolved (a label may name it), so callers apply CheckWriteFiles then.
func ParseTask(body string) (Task, error) {
	lines := SplitLines(body)
	var block *Fence
	for _, f := range ScanMarkdown(body).Fences {
		if !f.TopLevel || f.Info != "studio" {
			continue
		}
		if block != nil {
			return Task{}, &TaskError{Line: f.Open, Message: fmt.Sprintf("a second ```studio block; an issue holds exactly one task (the first opens on line %d)", block.Open)}
		}
		if f.Close == 0 {
			return Task{}, &TaskError{Line: f.Open, Message: "the ```studio block is never closed; end it with a fence line like the one that opens it"}
		}
		block = &f
	}
	if block == nil {
		return parseTaskForm(body)
	}
	start, end := block.Open-1, block.Close-1 // 0-based fence lines
	src := strings.Join(lines[start+1:end], "\n")
	task, err := decodeTask(src, start+1)
	if err != nil {
		return Task{}, err
	}
	task.Line = start + 1
	outside := append(append([]string{}, lines[:start]...), lines[end+1:]...)
	task.Description = strings.TrimSpace(strings.Join(outside, "\n"))
	return task, nil
}

func decodeTask(src string, fenceLine int) (Task, error) {
	var task Task
	if strings.TrimSpace(src) == "" {
		return task, &TaskError{Line: fenceLine, Message: "the ```studio block is empty; it needs at least `writeFiles: [path, ...]`"}
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		return task, yamlError(err, fenceLine)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return task, &TaskError{Line: fenceLine + 1, Message: "the ```studio block must be a YAML mapping of keys such as role, writeFiles, files"}
	}
	keyLine := func(key string) int {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i].Line
			}
		}
		return 0
	}
	lineOf := func(key string) int { return fenceLine + keyLine(key) }
	depKey := "dependsOn"
	if keyLine("dependsOn") == 0 && keyLine("dependencies") > 0 {
		depKey = "dependencies"
	}
	var doc taskDoc
	dec := yaml.NewDecoder(bytes.NewReader([]byte(src)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		var de *depError
		if errors.As(err, &de) {
			return task, &TaskError{Line: fenceLine + de.line, Field: depKey, Message: de.msg}
		}
		return task, yamlError(err, fenceLine)
	}
	if keyLine("dependsOn") > 0 && keyLine("dependencies") > 0 {
		return task, &TaskError{Line: lineOf("dependencies"), Field: "dependencies", Message: "is the seed's name for dependsOn; give one of them, not both"}
	}
	task = doc.Task
	task.DependsOn = append(doc.DependsOn.refs, doc.Dependencies.refs...)
	return task, validateTask(&task, lineOf)
}

// taskDoc is what a ```studio block decodes into: the Task, with its dependency list under either
// key and in any shape depRefs accepts.
type taskDoc struct {
	Task         `yaml:",inline"`
	DependsOn    depRefs `yaml:"dependsOn"`
	Dependencies depRefs `yaml:"dependencies"`
}

// depRefs is a dependency list as a block may write it. Besides this block's own `["#12"]`, it
// takes the shapes of the seed's task store (seed §7.1, v1 and v2), so tasks carried over from a
// .codex/tasks.json keep their graph: a bare number (`12`), a numeric string (`"12"`), an object
// `{taskId: "#12", requiredStatus: done}`, and a single entry without the list. The seed forces
// requiredStatus to done whatever it says, and so does the studio: it is accepted and ignored.
// Every entry becomes "#N".
type depRefs struct{ refs []string }

// depError is a bad dependency entry, on its line of the block (decodeTask adds the fence's).
type depError struct {
	line int
	msg  string
}

func (e *depError) Error() string { return e.msg }

func (d *depRefs) UnmarshalYAML(n *yaml.Node) error {
	entries := []*yaml.Node{n}
	switch n.Kind {
	case yaml.SequenceNode:
		entries = n.Content
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
	}
	for _, e := range entries {
		ref, err := depEntry(e)
		if err != nil {
			return err
		}
		d.refs = append(d.refs, ref)
	}
	return nil
}

// depEntry reads one dependency: a scalar issue reference or a {taskId, requiredStatus} object.
func depEntry(e *yaml.Node) (string, error) {
	switch e.Kind {
	case yaml.ScalarNode:
		if ref, ok := canonicalIssueRef(e.Value); ok && e.Tag != "!!null" {
			return ref, nil
		}
		return "", &depError{e.Line, fmt.Sprintf("%q is not an issue reference; write \"#12\"", e.Value)}
	case yaml.MappingNode:
		var ref string
		for i := 0; i+1 < len(e.Content); i += 2 {
			k, v := e.Content[i], e.Content[i+1]
			switch k.Value {
			case "taskId":
				if v.Kind != yaml.ScalarNode {
					return "", &depError{v.Line, "taskId must be an issue reference such as \"#12\""}
				}
				r, ok := canonicalIssueRef(v.Value)
				if !ok {
					return "", &depError{v.Line, fmt.Sprintf("taskId %q is not an issue reference; write \"#12\"", v.Value)}
				}
				ref = r
			case "requiredStatus":
				// Forced to done, as the seed does: a dependency is satisfied only when done.
			default:
				return "", &depError{k.Line, fmt.Sprintf("%q is not a dependency field; an entry is \"#12\" or {taskId: \"#12\", requiredStatus: done}", k.Value)}
			}
		}
		if ref == "" {
			return "", &depError{e.Line, "a dependency object needs taskId, as in {taskId: \"#12\", requiredStatus: done}"}
		}
		return ref, nil
	}
	return "", &depError{e.Line, "a dependency is an issue reference such as \"#12\" or {taskId: \"#12\", requiredStatus: done}"}
}

// canonicalIssueRef reads "#12", "12" or " #12 " as "#12"; 0, signs, other text and numbers too
// large for an int are not issue references.
func canonicalIssueRef(s string) (string, bool) {
	n, ok := issueNumber(s)
	if !ok {
		return "", false
	}
	return "#" + strconv.Itoa(n), true
}

func issueNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if !issueRefShape.MatchString(s) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// Dependencies returns the issue numbers the task depends on, in the order given, each once.
// ParseTask has already normalized DependsOn, so the error is for a Task built by hand.
func (t Task) Dependencies() ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, d := range t.DependsOn {
		n, ok := issueNumber(d)
		if !ok {
			return nil, &TaskError{Line: t.Line, Field: "dependsOn", Message: fmt.Sprintf("%q is not an issue reference; write \"#12\"", d)}
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// validateTask checks and normalizes a decoded task, whether it came from a ```studio block or
// an issue form; lineOf names the body line of a task key for the error.
func validateTask(task *Task, lineOf func(key string) int) error {
	task.Role = strings.TrimSpace(task.Role)
	if len(task.WriteFiles) == 0 {
		// Required only of a role that writes, which is known once labels are read: CheckWriteFiles.
		task.noWriteFiles = &TaskError{Line: lineOf("writeFiles"), Field: "writeFiles", Message: writeFilesRequired}
	}
	seen := map[string]bool{}
	var cleaned []string
	for _, p := range task.WriteFiles {
		c, err := CleanWritePath(p)
		if err != nil {
			return &TaskError{Line: lineOf("writeFiles"), Field: "writeFiles", Message: err.Error()}
		}
		if !seen[c] {
			seen[c] = true
			cleaned = append(cleaned, c)
		}
	}
	task.WriteFiles = cleaned
	for i, p := range task.Files {
		c, err := CleanWritePath(p)
		if err != nil {
			return &TaskError{Line: lineOf("files"), Field: "files", Message: err.Error()}
		}
		task.Files[i] = c
	}
	if task.Verify != nil && strings.TrimSpace(task.Verify.Command) == "" {
		return &TaskError{Line: lineOf("verify"), Field: "verify.command", Message: "verification command is required"}
	}
	if mp := task.RunPolicy.MaxFixPasses; mp != nil && *mp < 0 {
		return &TaskError{Line: lineOf("runPolicy"), Field: "runPolicy.maxFixPasses", Message: "must be 0 or more"}
	}
	if tier := task.RunPolicy.ModelTier; tier != "" && !slices.Contains(modelTiers, tier) {
		return &TaskError{Line: lineOf("runPolicy"), Field: "runPolicy.modelTier", Message: "must be sol, terra or luna"}
	}
	if _, err := egress.ParseList(task.AllowHosts); err != nil {
		return &TaskError{Line: lineOf("allowHosts"), Field: "allowHosts", Message: err.Error()}
	}
	for i, d := range task.DependsOn {
		ref, ok := canonicalIssueRef(d)
		if !ok {
			return &TaskError{Line: lineOf("dependsOn"), Field: "dependsOn", Message: fmt.Sprintf("%q is not an issue reference; write \"#12\"", d)}
		}
		task.DependsOn[i] = ref
	}
	return nil
}

// yamlTypeOf is the Go type a yaml.v3 "field x not found in type T" message names.
func yamlTypeOf(msg string) string {
	if i := strings.LastIndex(msg, "in type "); i >= 0 {
		return strings.TrimSpace(msg[i+len("in type "):])
	}
	return ""
}

var (
	yamlLine      = regexp.MustCompile(`line (\d+): (.*)`)
	unknownField  = regexp.MustCompile(`field (\S+) not found`)
	issueRefShape = regexp.MustCompile(`^#?\d+$`)
)

// yamlError turns a yaml.v3 error into a TaskError on the issue body's line numbers.
func yamlError(err error, fenceLine int) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	isType := errors.As(err, &te) && len(te.Errors) > 0
	if isType {
		// The decoder goes on past a wrong type or an unknown field and lists them all: each is
		// named, so a block with three mistakes takes one round, not three.
		msgs = te.Errors
	}
	var all []*TaskError
	for _, msg := range msgs {
		all = append(all, yamlMessageError(msg, isType, fenceLine))
	}
	first := *all[0]
	for _, e := range all[1:] {
		first.Message += "; and " + e.Error()
	}
	return &first
}

// taskFieldNames and runPolicyFieldNames are the keys a block may use, for "did you mean".
var (
	taskFieldNames      = []string{"role", "writeFiles", "files", "dependsOn", "dependencies", "priority", "verify", "runPolicy", "approvalScope", "workflowId", "groupId", "allowHosts"}
	runPolicyFieldNames = []string{"review", "maxFixPasses", "constrainedSandbox", "modelTier"}
)

// yamlMessageError is one yaml.v3 message as a TaskError on its body line.
func yamlMessageError(msg string, isType bool, fenceLine int) *TaskError {
	msg = strings.TrimPrefix(msg, "yaml: ")
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &TaskError{Line: fenceLine, Message: "the ```studio block is not valid YAML: " + msg}
	}
	var n int
	fmt.Sscanf(m[1], "%d", &n)
	detail := m[2]
	field := ""
	if f := unknownField.FindStringSubmatch(detail); f != nil {
		field = f[1]
		detail = "is not a task field; known fields are role, writeFiles, files, dependsOn (or dependencies), priority, verify, runPolicy, approvalScope, workflowId, groupId, allowHosts"
		names := taskFieldNames
		if strings.HasSuffix(yamlTypeOf(m[2]), "RunPolicy") {
			field = "runPolicy." + f[1]
			detail = "is not a runPolicy field; known runPolicy fields are " + runPolicyFields
			names = runPolicyFieldNames
		}
		if close := suggest.Closest(f[1], names); len(close) > 0 {
			// The guess says more than the list; the list stays for a name nothing is close to.
			detail = detail[:strings.Index(detail, ";")] + ". Did you mean `" + strings.Join(close, "` or `") + "`?"
		}
	}
	if !isType {
		detail = "invalid YAML: " + detail
	}
	return &TaskError{Line: fenceLine + n, Field: field, Message: detail}
}
