package taskgraph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// A workflow recipe (policy.FindRecipe) made into task issues on the issue it was asked on (seed
// §7.5): each step a task issue made by the TaskCreator, so with the same checks, body and labels
// as `/studio task create`; its dependencies the issues of the earlier steps; each a sub-issue of
// the issue asked on; and the list of them appended to that issue's body.

// RecipeIssues is what opening a recipe's tasks asks of GitHub beyond creating them: the sub-issue
// link, and the parent's body read fresh and rewritten.
type RecipeIssues interface {
	AddSubIssue(ctx context.Context, parent int, childID int64) error
	IssueNow(ctx context.Context, number int) (hub.Issue, error)
	EditIssueBody(ctx context.Context, number int, body string) error
}

// RecipeTasks opens one recipe's tasks under Parent.
type RecipeTasks struct {
	Creator *TaskCreator
	GitHub  RecipeIssues
	Parent  int
	Logf    func(format string, args ...any)
}

// RecipeOutcome is what opening a recipe's tasks did, for the reply.
type RecipeOutcome struct {
	Recipe  policy.Recipe
	GroupID string
	Created map[string]int // step key → issue
	Notes   []string       // what did not happen (a refused sub-issue link, the body left alone)
}

// NewRecipeOutcome starts a recipe's outcome with a fresh group id: the workflow's id and 8 hex
// characters, as the seed's first 8 of a random UUID.
func NewRecipeOutcome(recipe policy.Recipe) *RecipeOutcome {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("taskgraph: no randomness for a recipe's group id: " + err.Error())
	}
	return &RecipeOutcome{Recipe: recipe, GroupID: policy.RecipeGroupID(recipe.WorkflowID, hex.EncodeToString(b[:])), Created: map[string]int{}}
}

// Open opens the recipe's task issues in order, each a sub-issue of the parent. A refused link is
// a note, not a failure: the task list in the body links them anyway.
func (rt RecipeTasks) Open(ctx context.Context, out *RecipeOutcome) error {
	for i, step := range out.Recipe.Tasks {
		nt, err := out.Recipe.NewTask(i, out.GroupID, rt.Parent, out.Created)
		if err != nil {
			return &TaskRefusal{Msg: err.Error()}
		}
		is, _, err := rt.Creator.Create(ctx, nt)
		if err != nil {
			if len(out.Created) > 0 {
				err = fmt.Errorf("%w (after opening %s)", err, texts.IssueRefs(out.issues()))
			}
			return err
		}
		out.Created[step.Key] = is.Number
		rt.Logf("recipe %s: step %s is task #%d", out.Recipe.WorkflowID, step.Key, is.Number)
		if err := rt.GitHub.AddSubIssue(ctx, rt.Parent, is.ID); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			out.Notes = append(out.Notes, texts.SubIssueRefused(is.Number, rt.Parent, hub.Explain(err)))
		}
	}
	return nil
}

// AppendTaskList appends the created tasks' list to the parent's body, read fresh so an edit made
// since the command is kept. A body that would grow past GitHub's limit is left alone, with a
// note.
func (rt RecipeTasks) AppendTaskList(ctx context.Context, out *RecipeOutcome) {
	if len(out.Created) == 0 {
		return
	}
	is, err := rt.GitHub.IssueNow(ctx, rt.Parent)
	if err != nil {
		out.Notes = append(out.Notes, texts.TaskListNotAdded(rt.Parent, hub.Explain(err)))
		return
	}
	body := strings.TrimRight(is.Body, "\n") + "\n\n" + texts.RecipeTaskListSection(out.Recipe.WorkflowID, out.GroupID, policy.RecipeTaskList(out.Recipe, out.Created)) + "\n"
	if strings.TrimSpace(is.Body) == "" {
		body = strings.TrimLeft(body, "\n")
	}
	if utf8.RuneCountInString(body) > policy.MaxBodyChars {
		out.Notes = append(out.Notes, texts.TaskListTooLong(rt.Parent, policy.MaxBodyChars))
		return
	}
	if err := rt.GitHub.EditIssueBody(ctx, rt.Parent, body); err != nil {
		out.Notes = append(out.Notes, texts.TaskListNotAdded(rt.Parent, hub.Explain(err)))
	}
}

// issues are the issues opened so far, in recipe order.
func (out *RecipeOutcome) issues() []int {
	var ns []int
	for _, t := range out.Recipe.Tasks {
		if n, ok := out.Created[t.Key]; ok {
			ns = append(ns, n)
		}
	}
	return ns
}
