package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// `/studio workflow <id>` on an issue runs one of the studio's workflows (a built-in one by id or
// alias, or the project's own from its customization file) as the issue's task: the workflow's
// role, with the workflow's objective ahead of the issue's text. Everything else is `run`'s:
// eligibility, plan phase, implementation or read-only report.

// WorkflowOptions are `workflow`'s: the workflow and `run`'s --dry-run.
type WorkflowOptions struct {
	ID string
	RunOptions
}

// RecipeOptions are `workflow create-tasks`'s: the recipe (a workflow's id or alias) and
// --dry-run (recipes.go).
type RecipeOptions struct {
	ID     string
	DryRun bool
}

func parseWorkflowOptions(args []string) (any, error) {
	if len(args) > 0 && strings.EqualFold(args[0], "create-tasks") {
		id, dry, err := parseIDAndDryRun(args[1:])
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, errors.New(texts.CreateTasksNeedsRecipe())
		}
		return RecipeOptions{ID: id, DryRun: dry}, nil
	}
	id, dry, err := parseIDAndDryRun(args)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New(texts.WorkflowNeedsID)
	}
	o := WorkflowOptions{ID: id}
	o.DryRun = dry
	return o, nil
}

// parseIDAndDryRun reads `<id> [--dry-run]`, in any order.
func parseIDAndDryRun(args []string) (id string, dryRun bool, err error) {
	for _, a := range args {
		switch {
		case strings.EqualFold(a, "--dry-run"):
			dryRun = true
		case id == "" && !strings.HasPrefix(a, "-"):
			id = a
		default:
			return "", false, &unexpectedArgError{Arg: a}
		}
	}
	return id, dryRun, nil
}

func init() {
	register(&verb{
		name: "workflow", order: 15, served: func(opts any) bool { _, recipe := opts.(RecipeOptions); return recipe }, args: "<id> | create-tasks <recipe>", flags: []string{"--dry-run"}, where: "on an issue",
		what: "runs one of the studio's workflows (built-in or the project's own, by id or alias) as the issue's task: the workflow's role and objective, the issue's text and `studio` block (for `writeFiles`). " +
			"`create-tasks <recipe>` instead opens the recipe's task issues (" + strings.Join(texts.QuoteAll(policy.RecipeIDs()), ", ") + ") with their dependencies, as sub-issues of this one listed in its body; with `--dry-run` it only shows them",
		parse:     parseWorkflowOptions,
		needsBase: true,
		onIssue: func(ctx context.Context, r *run) error {
			if o, ok := r.cmd.Opts.(RecipeOptions); ok {
				return r.createRecipeTasks(ctx, o)
			}
			return r.execute(ctx)
		},
	})
}

// workflowTask is the task a workflow run takes: the issue's task block if it has one (it must
// name the workflow's role or none), the workflow's role, and its objective first.
func (r *run) workflowTask(ctx context.Context, base, id string) (policy.Task, string, error) {
	rs, err := r.ev.roles(ctx, base)
	if err != nil {
		return policy.Task{}, err.Error(), nil
	}
	wf, ok := rs.Workflow(id)
	if !ok {
		return policy.Task{}, texts.UnknownWorkflow(prompts.UnknownWorkflowMessage(texts.OneLine(id, 100)), prompts.CustomizationPath), nil
	}
	task, err := r.ev.taskBlock(r.issue.Body)
	switch {
	case errors.Is(err, policy.ErrNoTaskBlock):
		task = policy.Task{Description: strings.TrimSpace(r.issue.Body)}
	case err != nil:
		return policy.Task{}, texts.TaskBlockUnusable(err), nil
	case task.Role != "" && task.Role != wf.Role:
		return policy.Task{}, texts.WorkflowRoleConflict(task.Role, wf.ID, wf.Role, r.cfg.TriggerPhrase), nil
	}
	task.Role = wf.Role
	task.WorkflowID = wf.ID // the run takes the workflow's model and effort (RouteForTask)
	task.Description = strings.TrimSpace(fmt.Sprintf("Workflow `%s`: %s\n\n%s", wf.ID, wf.Objective, task.Description))
	role, err := r.ev.resolveRole(ctx, task, base, r.issue.Labels, r.triggerLabel())
	if err != nil {
		return policy.Task{}, err.Error(), nil
	}
	task.Role = role
	return task, "", nil
}
