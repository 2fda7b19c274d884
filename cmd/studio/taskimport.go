package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/policy"
)

// `studio task import` moves a seed project's `.codex/tasks.json` (v1 or v2) onto GitHub: one task
// issue per open task, created as `studio task create` creates one (taskgraph.TaskCreator), in an
// order where each task's dependencies exist first, so its dependsOn names their issues.

const taskImportLong = `Reads a seed project's .codex/tasks.json (schemaVersion 1 or 2) and opens one task issue
per open task (ready, running or blocked), dependencies first, each task's dependencies turned into
the issues opened for them. A done task is not opened and a dependency on it counts as met; a
cancelled or skipped task is not opened, nor is a task that depends on one. Each issue is made as
"studio task create" makes one (the same checks, body and labels) and names its seed id.

Run it with --dry-run first: it prints what would be opened and opens nothing. Importing twice
opens the tasks twice. GitHub is reached as for "studio task create".`

type taskImportFlags struct {
	project, file, repo, labelPrefix string
	dryRun                           bool
}

func newTaskImportCmd(e env) *cobra.Command {
	var f taskImportFlags
	c := &cobra.Command{
		Use:     "import",
		Short:   "open task issues from a seed project's .codex/tasks.json (--dry-run first)",
		Long:    taskImportLong,
		Example: `  studio task import --dry-run --project ../my-game`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runTaskImport(c.Context(), e, f)
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.project, "project", "", "the seed project's root (default $GITHUB_WORKSPACE, else the current directory)")
	fs.StringVar(&f.file, "file", "", "the task store (default <project>/.codex/tasks.json)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print what would be opened; open nothing")
	fs.StringVar(&f.repo, "repo", "", "owner/name of the repository (default $GITHUB_REPOSITORY)")
	fs.StringVar(&f.labelPrefix, "label-prefix", "studio:", "the action's label-prefix input")
	return c
}

func runTaskImport(ctx context.Context, e env, f taskImportFlags) error {
	path := f.file
	if path == "" {
		root, err := projectRoot(f.project, e.getenv)
		if err != nil {
			return err
		}
		path = filepath.Join(root, ".codex", "tasks.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return failf("%v", err)
	}
	tasks, err := policy.ParseTaskStore(data)
	if err != nil {
		return failf("%s: %v", path, err)
	}
	plan, err := policy.PlanTaskImport(tasks)
	if err != nil {
		return failf("%s: %v", path, err)
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(e.stdout, "not opened: %s\n", s)
	}
	if f.dryRun {
		for _, t := range plan.Open {
			fmt.Fprintf(e.stdout, "would open %s: [%s] %s; depends on: %s; writeFiles: %s\n", t.ID, t.Role, t.Title, orDefault(strings.Join(t.DependsOn, ", "), "none"), orDefault(strings.Join(t.WriteFiles, ", "), "none"))
		}
		fmt.Fprintf(e.stdout, "Dry run: %d task issues would be opened; nothing was.\n", len(plan.Open))
		return nil
	}
	gh, err := githubFromEnv(e, f.repo, "to open the issues", "write issues")
	if err != nil {
		return err
	}
	opened := map[string]int{}
	for _, t := range plan.Open {
		nt := policy.NewTask{Title: t.Title, Role: t.Role, Files: t.Files, WriteFiles: t.WriteFiles, Verify: t.Verify,
			WorkflowID: t.WorkflowID, GroupID: t.GroupID, Priority: int(math.Round(t.Priority)),
			Description: fmt.Sprintf("Imported from `.codex/tasks.json`: seed task `%s`.", t.ID)}
		for _, d := range t.DependsOn {
			nt.DependsOn = append(nt.DependsOn, opened[d])
		}
		res, err := createTaskOn(ctx, gh, f.labelPrefix, nt)
		if err != nil {
			var refusal *taskgraph.TaskRefusal
			msg := hub.Explain(err)
			if errors.As(err, &refusal) {
				msg = refusal.Msg
			}
			return failf("%s: %s (%d of %d opened before it)", t.ID, msg, len(opened), len(plan.Open))
		}
		opened[t.ID] = res.issue.Number
		fmt.Fprintf(e.stdout, "%s → #%d %s\n", t.ID, res.issue.Number, res.issue.URL)
	}
	return nil
}
