package policy

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Creating a task (`studio task create`, `/studio task create`, a workflow recipe) makes an issue:
// its title is the task's title, its body the task block, its labels say it is a ready task of a
// role (DESIGN §3). The seed's createTask (§7.1) checks the same things with the same texts; ids
// are issue numbers here.

// NewTask is a task to create, as the command gave it.
type NewTask struct {
	Title string
	Role  string
	// Description is text for the issue body besides the block (optional): like any issue text,
	// untrusted input for Codex.
	Description string
	Files       []string // --file: context files
	WriteFiles  []string // --write-file: the files the task may change
	DependsOn   []int    // --depends-on: issue numbers
	Priority    int      // --priority, any integer
	Verify      *Verification
	WorkflowID  string
	GroupID     string
}

var roleIDShape = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ValidateNewTask checks a task to create and returns it normalized: the title trimmed to one line,
// paths cleaned by the seed's literal rule (CleanLiteralPath) and each kept once, dependencies each
// once. exists reports whether an issue number is a task; every dependency must be one. Whether
// the role exists is the caller's to check (policy does not know the roles), as is whether a
// role that writes has writeFiles: the seed creates such a task, and its run asks for them
// (CheckWriteFiles).
func ValidateNewTask(t NewTask, exists func(int) bool) (NewTask, error) {
	t.Title = strings.Join(strings.Fields(t.Title), " ")
	if t.Title == "" {
		return NewTask{}, errors.New("task title is required")
	}
	t.Role = strings.TrimSpace(t.Role)
	switch {
	case t.Role == "":
		return NewTask{}, errors.New("task role is required: give --role <role>")
	case !roleIDShape.MatchString(t.Role):
		return NewTask{}, fmt.Errorf("--role must be a role id such as gameplay-programmer (lowercase letters, digits and hyphens): %s", t.Role)
	}
	var deps []int
	for _, d := range t.DependsOn {
		if d <= 0 || exists == nil || !exists(d) {
			return NewTask{}, fmt.Errorf("Unknown dependency task: #%d", d)
		}
		if !slices.Contains(deps, d) {
			deps = append(deps, d)
		}
	}
	t.DependsOn = deps
	var err error
	if t.Files, err = literalPaths(t.Files, "--file"); err != nil {
		return NewTask{}, err
	}
	if t.WriteFiles, err = literalPaths(t.WriteFiles, "--write-file"); err != nil {
		return NewTask{}, err
	}
	if t.Verify != nil {
		v := Verification{Command: strings.TrimSpace(t.Verify.Command), Args: slices.Clone(t.Verify.Args)}
		if v.Command == "" {
			return NewTask{}, errors.New("verification command is required")
		}
		t.Verify = &v
	}
	t.WorkflowID, t.GroupID = strings.TrimSpace(t.WorkflowID), strings.TrimSpace(t.GroupID)
	t.Description = strings.TrimSpace(t.Description)
	for _, f := range ScanMarkdown(t.Description).Fences {
		if f.TopLevel && f.Info == "studio" {
			return NewTask{}, errors.New("the description holds a ```studio block; the task block is made from the options, so leave it out of the description")
		}
	}
	return t, nil
}

func literalPaths(ps []string, label string) ([]string, error) {
	var out []string
	for _, p := range ps {
		c, err := CleanLiteralPath(p, label)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// newTaskBlock is the task block's YAML for a created task, in the order a reader wants it.
type newTaskBlock struct {
	Role       string        `yaml:"role"`
	WriteFiles []string      `yaml:"writeFiles,flow"`
	Files      []string      `yaml:"files,omitempty,flow"`
	DependsOn  []string      `yaml:"dependsOn,omitempty,flow"`
	Priority   int           `yaml:"priority,omitempty"`
	Verify     *newTaskCheck `yaml:"verify,omitempty,flow"`
	WorkflowID string        `yaml:"workflowId,omitempty"`
	GroupID    string        `yaml:"groupId,omitempty"`
}

type newTaskCheck struct {
	Command string   `yaml:"command"`
	Args    []string `yaml:"args,omitempty,flow"`
}

// RenderTaskIssue writes a validated task as an issue: the title, and a body that opens with the
// ```studio block (writeFiles always present, `[]` when none, so a writer sees where they go),
// then the description. The block comes first so that nothing in the description, such as a
// fence left open, can swallow it; ParseTask reads the body back to the same task.
func RenderTaskIssue(t NewTask) (title, body string) {
	doc := newTaskBlock{Role: t.Role, WriteFiles: t.WriteFiles, Files: t.Files, Priority: t.Priority, WorkflowID: t.WorkflowID, GroupID: t.GroupID}
	if doc.WriteFiles == nil {
		doc.WriteFiles = []string{}
	}
	for _, d := range t.DependsOn {
		doc.DependsOn = append(doc.DependsOn, "#"+strconv.Itoa(d))
	}
	if t.Verify != nil {
		doc.Verify = &newTaskCheck{Command: t.Verify.Command, Args: t.Verify.Args}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		// Strings, ints and lists of strings always encode.
		panic("policy: encode a task block: " + err.Error())
	}
	_ = enc.Close()
	yamlText := strings.TrimRight(b.String(), "\n")
	fence := strings.Repeat("`", max(3, longestBacktickRun(yamlText)+1))
	body = fence + "studio\n" + yamlText + "\n" + fence + "\n"
	if t.Description != "" {
		body += "\n" + t.Description + "\n"
	}
	return t.Title, body
}

// NewTaskLabels are the labels a created task's issue gets: `<prefix>task`, its role's and
// `<prefix>status/ready`.
func NewTaskLabels(prefix, role string) []string {
	return []string{prefix + "task", prefix + roleLabelStem + role, StatusLabel(prefix, StatusReady)}
}

// longestBacktickRun is the longest run of backticks in s: a fence must be longer to hold it.
func longestBacktickRun(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
