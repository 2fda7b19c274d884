package taskgraph

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// UnexpectedArg is a command parser's refusal of an argument it does not take; the command's
// reply names it with the verb's usage.
type UnexpectedArg struct{ Arg string }

func (e *UnexpectedArg) Error() string { return "unexpected " + e.Arg }

// IssueRef reads `#12` or `12`.
func IssueRef(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	return n, err == nil && n > 0 && !strings.HasPrefix(strings.TrimPrefix(s, "#"), "+")
}

// taskFlags are the flags that take a value; every one of them may be written `--flag value`
// or `--flag=value`.
var taskFlags = []string{"--role", "--file", "--write-file", "--depends-on", "--priority", "--verify-command", "--verify-arg"}

// ParseTaskFlags reads `task create`'s flags and title words (the CLI's `studio task create`
// takes the same): every flag that takes a value may be written `--flag value` or `--flag=value`.
func ParseTaskFlags(args []string) (policy.NewTask, error) {
	var task policy.NewTask
	t := &task
	var title []string
	var verifyArgs []string
	verifyCommand, sawVerifyCommand := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" { // everything after is the title, dashes and all
			title = append(title, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") {
			title = append(title, a)
			continue
		}
		name, value, inline := strings.Cut(a, "=")
		name = strings.ToLower(name)
		if !slices.Contains(taskFlags, name) {
			return policy.NewTask{}, &UnexpectedArg{Arg: a}
		}
		if !inline {
			if i+1 >= len(args) {
				return policy.NewTask{}, errors.New(texts.NeedsValue(name))
			}
			i++
			value = args[i]
		}
		switch name {
		case "--role":
			if t.Role != "" && t.Role != value {
				return policy.NewTask{}, errors.New(texts.RoleOnce)
			}
			t.Role = value
		case "--file":
			t.Files = append(t.Files, value)
		case "--write-file":
			t.WriteFiles = append(t.WriteFiles, value)
		case "--depends-on":
			n, ok := IssueRef(value)
			if !ok {
				return policy.NewTask{}, errors.New(texts.DependsOnNotIssue(value))
			}
			t.DependsOn = append(t.DependsOn, n)
		case "--priority":
			p, err := strconv.Atoi(value)
			if err != nil {
				return policy.NewTask{}, errors.New(texts.PriorityNotInt(value))
			}
			t.Priority = p
		case "--verify-command":
			if sawVerifyCommand {
				return policy.NewTask{}, errors.New(texts.VerifyCommandOnce)
			}
			verifyCommand, sawVerifyCommand = value, true
		case "--verify-arg":
			verifyArgs = append(verifyArgs, value)
		}
	}
	if len(verifyArgs) > 0 && !sawVerifyCommand {
		return policy.NewTask{}, errors.New(texts.VerifyArgAlone)
	}
	if sawVerifyCommand {
		t.Verify = &policy.Verification{Command: verifyCommand, Args: verifyArgs}
	}
	t.Title = strings.Join(title, " ")
	return task, nil
}

// OrchestrateOptions are `orchestrate`'s.
type OrchestrateOptions struct {
	Tasks          []int
	Workflow       string
	MaxConcurrency int // 0 is the default, 1
	DryRun         bool
	// Marks are delegated children's trust marks, shown in the tracking comment.
	Marks map[int]string
}

// ParseOrchestrateFlags reads `orchestrate`'s tasks and flags.
func ParseOrchestrateFlags(args []string) (OrchestrateOptions, error) {
	var o OrchestrateOptions
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", errors.New(texts.NeedsValue(a))
			}
			i++
			return args[i], nil
		}
		switch strings.ToLower(a) {
		case "--dry-run":
			o.DryRun = true
		case "--workflow":
			v, err := value()
			if err != nil {
				return o, err
			}
			o.Workflow = v
		case "--max-concurrency":
			v, err := value()
			if err != nil {
				return o, err
			}
			n, err := policy.ParseMaxConcurrency(v)
			if err != nil {
				return o, errors.New(texts.Sentence(err.Error()))
			}
			o.MaxConcurrency = n
		default:
			n, ok := IssueRef(a)
			if !ok {
				return o, &UnexpectedArg{Arg: a}
			}
			o.Tasks = append(o.Tasks, n)
		}
	}
	return o, nil
}
