package bot

import (
	"context"
	"errors"

	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// `/studio workflow create-tasks <recipe> [--dry-run]` (seed §7.5) turns one of the workflow
// recipes into task issues on the issue it was typed on (taskgraph.RecipeTasks). A dry run shows
// the recipe and creates nothing.
func (r *run) createRecipeTasks(ctx context.Context, o RecipeOptions) error {
	recipe, err := r.findRecipe(ctx, o.ID)
	if err != nil {
		return r.taskReply(ctx, err, nil)
	}
	out := taskgraph.NewRecipeOutcome(recipe)
	if o.DryRun {
		r.st.Set(status.StepTaskParsed, status.StepDone, texts.RecipeDetail(recipe.WorkflowID, 0, true))
		return r.taskReply(ctx, nil, func() string {
			return texts.RecipeDryRunReply(r.tr.Issue, policy.RenderRecipe(recipe, out.GroupID, nil))
		})
	}
	creator, err := r.taskCreator(ctx)
	if err != nil {
		return r.taskReply(ctx, err, nil)
	}
	tasks := taskgraph.RecipeTasks{Creator: creator, GitHub: r.ev.gh, Parent: r.tr.Issue, Logf: r.cfg.logf}
	if err := tasks.Open(ctx, out); err != nil {
		var refusal *taskgraph.TaskRefusal
		if !errors.As(err, &refusal) || len(out.Created) == 0 {
			return r.taskReply(ctx, err, nil)
		}
		// A later step refused after earlier ones were opened: say which exist.
		out.Notes = append(out.Notes, texts.RecipeStopped(refusal.Msg))
	}
	tasks.AppendTaskList(ctx, out)
	r.st.Set(status.StepTaskParsed, status.StepDone, texts.RecipeDetail(recipe.WorkflowID, len(out.Created), false))
	return r.taskReply(ctx, nil, func() string {
		return texts.RecipeCreatedReply(r.cfg.TriggerPhrase, r.tr.Issue, len(out.Created), policy.RenderRecipe(recipe, out.GroupID, out.Created), out.Notes)
	})
}

// findRecipe resolves the recipe's name as the studio's workflows are named (an id or an alias,
// built-in or the project's own), then finds its recipe; the seed's texts tell an unknown
// workflow from one without a recipe.
func (r *run) findRecipe(ctx context.Context, name string) (policy.Recipe, error) {
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return policy.Recipe{}, err
	}
	rs, err := r.ev.roles(ctx, base)
	if err != nil {
		return policy.Recipe{}, &taskgraph.TaskRefusal{Msg: err.Error()}
	}
	id := name
	wf, known := rs.Workflow(name)
	if known {
		id = wf.ID
	}
	recipe, err := policy.FindRecipe(id, func(string) bool { return known })
	if err != nil {
		return policy.Recipe{}, &taskgraph.TaskRefusal{Msg: texts.UnknownRecipe(err)}
	}
	return recipe, nil
}
