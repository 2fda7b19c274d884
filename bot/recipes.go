package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// `/studio workflow create-tasks <recipe> [--dry-run]` (seed §7.5) turns one of the four
// workflow recipes (policy.FindRecipe) into task issues on the issue it was typed on: each step a
// task issue made by the TaskCreator (so with the same checks, body and labels as `/studio task
// create`), its dependencies the issues of the earlier steps, each a sub-issue of the issue typed
// on, and the list of them appended to that issue's body. A dry run shows the recipe and creates
// nothing.

// recipeGroupSuffix draws the group id's suffix: 8 hex characters, as the seed's first 8 of a
// random UUID.
func recipeGroupSuffix() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("bot: no randomness for a recipe's group id: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// recipeOutcome is what creating a recipe's tasks did, for the reply.
type recipeOutcome struct {
	recipe  policy.Recipe
	groupID string
	created map[string]int // step key → issue
	notes   []string       // what did not happen (a refused sub-issue link, the body left alone)
}

func (r *run) createRecipeTasks(ctx context.Context, o RecipeOptions) error {
	recipe, err := r.findRecipe(ctx, o.ID)
	if err != nil {
		return r.taskReply(ctx, err, nil)
	}
	out := recipeOutcome{recipe: recipe, groupID: policy.RecipeGroupID(recipe.WorkflowID, recipeGroupSuffix()), created: map[string]int{}}
	if o.DryRun {
		r.st.Set(status.StepTaskParsed, status.StepDone, texts.RecipeDetail(recipe.WorkflowID, 0, true))
		return r.taskReply(ctx, nil, func() string {
			return texts.RecipeDryRunReply(r.tr.Issue, policy.RenderRecipe(recipe, out.groupID, nil))
		})
	}
	creator, err := r.taskCreator(ctx)
	if err != nil {
		return r.taskReply(ctx, err, nil)
	}
	if err := r.openRecipeTasks(ctx, creator, &out); err != nil {
		var refusal *taskgraph.TaskRefusal
		if !errors.As(err, &refusal) || len(out.created) == 0 {
			return r.taskReply(ctx, err, nil)
		}
		// A later step refused after earlier ones were opened: say which exist.
		out.notes = append(out.notes, texts.RecipeStopped(refusal.Msg))
	}
	r.appendTaskList(ctx, &out)
	r.st.Set(status.StepTaskParsed, status.StepDone, texts.RecipeDetail(recipe.WorkflowID, len(out.created), false))
	return r.taskReply(ctx, nil, func() string {
		return texts.RecipeCreatedReply(r.cfg.TriggerPhrase, r.tr.Issue, len(out.created), policy.RenderRecipe(recipe, out.groupID, out.created), out.notes)
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

// openRecipeTasks opens the recipe's task issues in order, each a sub-issue of the issue typed
// on. A refused link is a note, not a failure: the task list in the body links them anyway.
func (r *run) openRecipeTasks(ctx context.Context, creator *taskgraph.TaskCreator, out *recipeOutcome) error {
	for i, step := range out.recipe.Tasks {
		nt, err := out.recipe.NewTask(i, out.groupID, r.tr.Issue, out.created)
		if err != nil {
			return &taskgraph.TaskRefusal{Msg: err.Error()}
		}
		is, _, err := creator.Create(ctx, nt)
		if err != nil {
			if len(out.created) > 0 {
				err = fmt.Errorf("%w (after opening %s)", err, texts.IssueRefs(createdIssues(out.recipe, out.created)))
			}
			return err
		}
		out.created[step.Key] = is.Number
		r.cfg.logf("recipe %s: step %s is task #%d", out.recipe.WorkflowID, step.Key, is.Number)
		if err := r.ev.gh.AddSubIssue(ctx, r.tr.Issue, is.ID); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			out.notes = append(out.notes, texts.SubIssueRefused(is.Number, r.tr.Issue, hub.Explain(err)))
		}
	}
	return nil
}

// issueEditor rewrites an issue's body (a recipe's task list, `/studio accept`'s task block).
type issueEditor interface {
	EditIssueBody(ctx context.Context, number int, body string) error
}

// appendTaskList appends the created tasks' list to the body of the issue typed on, read fresh
// so an edit made since the command is kept. A body that would grow past GitHub's limit is left
// alone, with a note.
func (r *run) appendTaskList(ctx context.Context, out *recipeOutcome) {
	if len(out.created) == 0 {
		return
	}
	is, err := r.ev.gh.IssueNow(ctx, r.tr.Issue)
	if err != nil {
		out.notes = append(out.notes, texts.TaskListNotAdded(r.tr.Issue, hub.Explain(err)))
		return
	}
	body := strings.TrimRight(is.Body, "\n") + "\n\n" + texts.RecipeTaskListSection(out.recipe.WorkflowID, out.groupID, policy.RecipeTaskList(out.recipe, out.created)) + "\n"
	if strings.TrimSpace(is.Body) == "" {
		body = strings.TrimLeft(body, "\n")
	}
	if utf8.RuneCountInString(body) > status.MaxCommentChars {
		out.notes = append(out.notes, texts.TaskListTooLong(r.tr.Issue, status.MaxCommentChars))
		return
	}
	if err := r.ev.gh.EditIssueBody(ctx, r.tr.Issue, body); err != nil {
		out.notes = append(out.notes, texts.TaskListNotAdded(r.tr.Issue, hub.Explain(err)))
	}
}

// createdIssues are the issues opened so far, in recipe order.
func createdIssues(recipe policy.Recipe, created map[string]int) []int {
	var out []int
	for _, t := range recipe.Tasks {
		if n, ok := created[t.Key]; ok {
			out = append(out, n)
		}
	}
	return out
}
