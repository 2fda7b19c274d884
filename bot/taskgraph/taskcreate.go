package taskgraph

import (
	"context"
	"errors"
	"fmt"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Creating task issues, shared by `/studio task create`, `/studio workflow create-tasks` and the
// CLI's `studio task create`: the same checks and texts wherever a task is made (seed §7.1's
// createTask, with issue numbers for ids). A task is an issue whose body is the task block
// (policy.RenderTaskIssue) and whose labels say it is a ready task of its role
// (policy.NewTaskLabels).

// TaskRefusal is a task that cannot be created as asked (a missing title, an unknown role or
// dependency, a bad path, no studio configuration): the user's to fix, not a failure of the
// studio. Nothing was created.
type TaskRefusal struct{ Msg string }

func (e *TaskRefusal) Error() string { return e.Msg }

func refusalf(format string, args ...any) error {
	return &TaskRefusal{Msg: fmt.Sprintf(format, args...)}
}

// taskIssues is what a TaskCreator asks of GitHub: a dependency's issue, and the new issue.
type TaskIssues interface {
	Issue(ctx context.Context, number int) (hub.Issue, error)
	CreateIssue(ctx context.Context, is hub.NewIssue) (hub.Issue, error)
}

// TaskCreator opens task issues in one repository, with the roles of its default branch.
type TaskCreator struct {
	gh     TaskIssues
	prefix string
	roles  roles.Catalog
	// tasks are the issue numbers known to be issues (not pull requests): the dependencies read
	// so far and the tasks this creator opened, so a recipe's later steps do not read back the
	// issues its earlier steps just created.
	tasks map[int]bool
}

// RequireStudioConfig checks, through readBase (a path's bytes on the default branch; ErrNotFound
// when absent), that the repository has a valid studio configuration: the seed's createTask needs
// one, and no task of a repository without it could run.
func RequireStudioConfig(readBase func(path string) ([]byte, error)) error {
	data, err := readBase(policy.StudioConfigPath)
	if roles.IsNotFound(err) {
		return ConfigRefusal(true, nil)
	}
	if err != nil {
		return err
	}
	_, err = policy.ParseStudioConfig(data)
	return ConfigRefusal(false, err)
}

// ConfigRefusal refuses creating a task on a default branch without a usable studio.json
// (missing, or err from decoding it); nil when neither.
func ConfigRefusal(missing bool, err error) error {
	switch {
	case missing:
		return refusalf("%s.", policy.ErrNoStudioConfig.Error())
	case err != nil:
		return refusalf("%s", texts.ConfigUnusable(err))
	}
	return nil
}

// NewTaskCreator creates tasks with the roles of the default branch (built-in and custom).
func NewTaskCreator(gh TaskIssues, labelPrefix string, roles roles.Catalog) *TaskCreator {
	return &TaskCreator{gh: gh, prefix: labelPrefix, roles: roles, tasks: map[int]bool{}}
}

// Create validates a task (policy.ValidateNewTask: a title, a role id, literal paths, a
// verification command; then that the role exists and that every dependency is an issue of this
// repository) and opens its issue. It returns the issue and the task as created (normalized). A
// refusal is a *TaskRefusal, with the seed's texts where the seed has one.
func (c *TaskCreator) Create(ctx context.Context, nt policy.NewTask) (hub.Issue, policy.NewTask, error) {
	// Shape first, so a malformed command reads no dependency.
	t, err := policy.ValidateNewTask(nt, func(int) bool { return true })
	if err != nil {
		return hub.Issue{}, nt, &TaskRefusal{Msg: err.Error()}
	}
	if _, ok := c.roles.Lookup(t.Role); !ok {
		return hub.Issue{}, nt, &TaskRefusal{Msg: c.roles.UnknownRoleMessage(t.Role)}
	}
	for _, d := range t.DependsOn {
		if _, ok := c.tasks[d]; ok {
			continue
		}
		is, err := c.gh.Issue(ctx, d)
		switch {
		case errors.Is(err, hub.ErrNotFound):
			c.tasks[d] = false
		case err != nil:
			return hub.Issue{}, nt, fmt.Errorf("read dependency #%d: %w", d, err)
		default:
			c.tasks[d] = !is.IsPull
		}
	}
	if t, err = policy.ValidateNewTask(t, func(n int) bool { return c.tasks[n] }); err != nil {
		return hub.Issue{}, nt, &TaskRefusal{Msg: err.Error()}
	}
	title, body := policy.RenderTaskIssue(t)
	is, err := c.gh.CreateIssue(ctx, hub.NewIssue{Title: title, Body: body, Labels: policy.NewTaskLabels(c.prefix, t.Role)})
	if err != nil {
		return hub.Issue{}, t, err
	}
	c.tasks[is.Number] = true
	return is, t, nil
}
