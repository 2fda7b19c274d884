package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// `studio task create` opens a task issue on GitHub from the command line, exactly as
// `/studio task create` does on an issue (taskgraph.TaskCreator: the same checks, texts, body and
// labels). It talks to GitHub with a token, so it works from a laptop or from any workflow step.

const taskCreateLong = `Opens a task issue on GitHub: the title, a studio task block made from the flags, and the
labels of a ready task of the role (<prefix>task, <prefix>role/<role>, <prefix>status/ready).
The checks and messages are /studio task create's: the role must be built in or defined on the
default branch, paths are literal, every --depends-on must be an existing issue, and the
repository needs a .codex/studio.json on its default branch. It prints the new issue's number
and URL; nothing runs until someone comments "/studio run" on it.

GitHub is reached with GITHUB_TOKEN (or GH_TOKEN), in the repository GITHUB_REPOSITORY (or
--repo), through GITHUB_API_URL (default https://api.github.com; a GitHub Enterprise Server's
https://HOST/api/v3 works).`

type taskCreateFlags struct {
	role, verifyCommand, repo, labelPrefix   string
	files, writeFiles, dependsOn, verifyArgs []string
	priority                                 int
}

func newTaskCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "create task issues on GitHub",
		Args:  subcommandArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usagef("a subcommand is required: studio task create or studio task import")
		},
	}
	var f taskCreateFlags
	create := &cobra.Command{
		Use:   "create <title...>",
		Short: "open a task issue (title, task block, labels) on GitHub",
		Long:  taskCreateLong,
		Example: `  GITHUB_TOKEN=... GITHUB_REPOSITORY=acme/hop studio task create --role gameplay-programmer \
    --write-file src/player/jump.gd --file design/gdd.md --depends-on '#12' --priority 2 \
    --verify-command godot --verify-arg --headless --verify-arg -s --verify-arg tests/run.gd \
    Add coyote time`,
		RunE: func(c *cobra.Command, args []string) error {
			return runTaskCreate(c.Context(), e, f, strings.Join(args, " "), c.Flags().Changed("verify-command"))
		},
	}
	fs := create.Flags()
	fs.StringVar(&f.role, "role", "", "the task's role: a built-in role id, or a custom-* role of the default branch (required)")
	fs.StringArrayVar(&f.files, "file", nil, "a context file the task reads (repeatable)")
	fs.StringArrayVar(&f.writeFiles, "write-file", nil, "a file the task may change, a literal path (repeatable)")
	fs.StringArrayVar(&f.dependsOn, "depends-on", nil, "an issue this task waits for, #N or N (repeatable)")
	fs.IntVar(&f.priority, "priority", 0, "orchestration starts higher priorities first")
	fs.StringVar(&f.verifyCommand, "verify-command", "", "the verification command, run without a shell")
	fs.StringArrayVar(&f.verifyArgs, "verify-arg", nil, "one argument of the verification command (repeatable)")
	fs.StringVar(&f.repo, "repo", "", "owner/name of the repository (default $GITHUB_REPOSITORY)")
	fs.StringVar(&f.labelPrefix, "label-prefix", "studio:", "the action's label-prefix input")
	cmd.AddCommand(create, newTaskImportCmd(e))
	return cmd
}

func runTaskCreate(ctx context.Context, e env, f taskCreateFlags, title string, verifyGiven bool) error {
	nt := policy.NewTask{Title: title, Role: f.role, Files: f.files, WriteFiles: f.writeFiles, Priority: f.priority}
	for _, d := range f.dependsOn {
		n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(d), "#"))
		if err != nil || n <= 0 {
			return usagef("--depends-on takes an issue number such as #12, not %q", d)
		}
		nt.DependsOn = append(nt.DependsOn, n)
	}
	switch {
	case verifyGiven:
		nt.Verify = &policy.Verification{Command: f.verifyCommand, Args: f.verifyArgs}
	case len(f.verifyArgs) > 0:
		return usagef("--verify-arg needs --verify-command: the arguments are the command's")
	}

	gh, err := githubFromEnv(e, f.repo, "to open the issue", "write issues")
	if err != nil {
		return err
	}
	res, err := createTaskOn(ctx, gh, f.labelPrefix, nt)
	if err != nil {
		var refusal *taskgraph.TaskRefusal
		if errors.As(err, &refusal) {
			return failf("%s", refusal.Msg)
		}
		return failf("%s", hub.Explain(err))
	}
	fmt.Fprintf(e.stdout, "#%d %s\n", res.issue.Number, res.issue.URL)
	if len(res.task.WriteFiles) == 0 && res.writes {
		fmt.Fprintf(e.stderr, "note: role %s changes files and the task names none; add writeFiles to its block (issue #%d) before it runs\n", res.task.Role, res.issue.Number)
	}
	return nil
}

// createdTask is a task createTaskOn opened: its issue, the task as created, and whether its
// role changes files.
type createdTask struct {
	issue  hub.Issue
	task   policy.NewTask
	writes bool
}

// taskRepo is what creating a task asks of GitHub: the default branch's files, a dependency's
// issue, and the new issue.
type taskRepo interface {
	DefaultBranch(ctx context.Context) (string, error)
	FileAtRef(ctx context.Context, path, ref string) ([]byte, error)
	Issue(ctx context.Context, number int) (hub.Issue, error)
	CreateIssue(ctx context.Context, is hub.NewIssue) (hub.Issue, error)
}

// createTaskOn creates one task in the repository gh serves, with the default branch's studio
// configuration and roles.
func createTaskOn(ctx context.Context, gh taskRepo, labelPrefix string, nt policy.NewTask) (createdTask, error) {
	base, err := gh.DefaultBranch(ctx)
	if err != nil {
		return createdTask{}, err
	}
	readBase := func(path string) ([]byte, error) { return gh.FileAtRef(ctx, path, base) }
	if err := taskgraph.RequireStudioConfig(readBase); err != nil {
		return createdTask{}, err
	}
	roles, err := roles.Load(readBase)
	if err != nil {
		return createdTask{}, &taskgraph.TaskRefusal{Msg: fmt.Sprintf("`%s` on `%s`: %v", prompts.CustomizationPath, base, err)}
	}
	is, t, err := taskgraph.NewTaskCreator(gh, labelPrefix, roles).Create(ctx, nt)
	if err != nil {
		return createdTask{}, err
	}
	phase, _ := roles.Lookup(t.Role)
	return createdTask{issue: is, task: t, writes: phase.Mutating()}, nil
}
