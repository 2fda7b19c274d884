package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Workflow task recipes (seed §7.5): `/studio workflow create-tasks <id> [--dry-run]` turns one of
// four workflows into a small task graph, one task issue per step, linked to the issue the command
// was typed on. The recipes are the seed's, as data.
//
// Recipe tasks name no writeFiles, as in the seed. Under orchestration a task of a writing role
// without writeFiles takes the project-wide lock (LockKeys), so it runs alone; and in the studio a
// writing role's first run proposes writeFiles (MissingWriteFiles) for a writer to accept, which
// completes the task's block in place. RenderRecipe says so.

// RecipeTask is one step of a recipe.
type RecipeTask struct {
	Key        string // the step's name within the recipe, used by DependsOn
	Title      string
	Role       string
	Files      []string
	WriteFiles []string
	DependsOn  []string // keys of earlier steps
}

// Recipe is a workflow's task graph.
type Recipe struct {
	WorkflowID string
	Title      string
	Tasks      []RecipeTask
}

var (
	gddFiles      = []string{"design/gdd.md"}
	timelineFiles = []string{"production/timeline.md"}
)

// recipes are the seed's four (src/workflow-recipes.ts), in its order.
var recipes = []Recipe{
	{WorkflowID: "vertical-slice", Title: "Vertical Slice Task Graph", Tasks: []RecipeTask{
		{Key: "plan", Title: "Plan the smallest production-quality vertical slice", Role: "producer", Files: gddFiles},
		{Key: "design", Title: "Define vertical-slice acceptance criteria and feature rules", Role: "game-designer", Files: gddFiles, DependsOn: []string{"plan"}},
		{Key: "implement", Title: "Implement the vertical-slice core loop", Role: "gameplay-programmer", Files: gddFiles, DependsOn: []string{"design"}},
		{Key: "qa", Title: "Verify vertical-slice playability and blockers", Role: "qa-playtester", Files: gddFiles, DependsOn: []string{"implement"}},
	}},
	{WorkflowID: "bugfix", Title: "Bugfix Task Graph", Tasks: []RecipeTask{
		{Key: "repro", Title: "Reproduce and document the bug", Role: "qa-playtester"},
		{Key: "fix", Title: "Implement the smallest safe bug fix", Role: "gameplay-programmer", DependsOn: []string{"repro"}},
		{Key: "verify", Title: "Verify the bug fix and regression risk", Role: "qa-playtester", DependsOn: []string{"fix"}},
	}},
	{WorkflowID: "ui-ux-review", Title: "UI/UX Review Task Graph", Tasks: []RecipeTask{
		{Key: "ux", Title: "Review the UI flow and interaction risks", Role: "ui-ux-designer", Files: gddFiles},
		{Key: "accessibility", Title: "Review accessibility gaps in the UI flow", Role: "accessibility-specialist", Files: gddFiles, DependsOn: []string{"ux"}},
		{Key: "qa", Title: "Verify UI/UX review evidence and blockers", Role: "qa-playtester", Files: gddFiles, DependsOn: []string{"accessibility"}},
	}},
	{WorkflowID: "release-checklist", Title: "Release Checklist Task Graph", Tasks: []RecipeTask{
		{Key: "qa", Title: "Validate release test evidence", Role: "qa-playtester", Files: timelineFiles},
		{Key: "perf", Title: "Review release performance risks", Role: "performance-analyst", Files: timelineFiles},
		{Key: "security", Title: "Review release security risks", Role: "security-engineer", Files: timelineFiles},
		{Key: "release", Title: "Synthesize ship or no-ship release checklist", Role: "release-manager", Files: timelineFiles, DependsOn: []string{"qa", "perf", "security"}},
	}},
}

// RecipeIDs are the workflows that have a task recipe.
func RecipeIDs() []string {
	ids := make([]string, len(recipes))
	for i, r := range recipes {
		ids[i] = r.WorkflowID
	}
	return ids
}

// FindRecipe returns the recipe of a workflow, a copy the caller may change. knownWorkflow reports
// whether id names a workflow at all (the caller knows the registry and resolves aliases to ids
// first); the seed's errors tell an unknown workflow from one without a recipe.
func FindRecipe(id string, knownWorkflow func(string) bool) (Recipe, error) {
	for _, r := range recipes {
		if r.WorkflowID == id {
			return cloneRecipe(r), nil
		}
	}
	if knownWorkflow != nil && knownWorkflow(id) {
		return Recipe{}, fmt.Errorf("Workflow %q does not have a task recipe", id)
	}
	return Recipe{}, fmt.Errorf("Unknown workflow %q", id)
}

func cloneRecipe(r Recipe) Recipe {
	r.Tasks = slices.Clone(r.Tasks)
	for i, t := range r.Tasks {
		t.Files, t.WriteFiles, t.DependsOn = slices.Clone(t.Files), slices.Clone(t.WriteFiles), slices.Clone(t.DependsOn)
		r.Tasks[i] = t
	}
	return r
}

// RecipeGroupID is the group id of one use of a recipe, `<workflowId>-<suffix>`; the seed's suffix
// is the first 8 characters of a random UUID, the caller's to draw.
func RecipeGroupID(workflowID, suffix string) string { return workflowID + "-" + suffix }

// NewTask is step i of the recipe as a task to create (ValidateNewTask, RenderTaskIssue): its
// dependencies are the issues created for earlier steps (created maps a key to its issue), and
// parent, when not 0, is the issue the recipe was asked for on, named in the description. Steps
// are created in order, so an unresolved key is the recipe's own error (the seed's text).
func (r Recipe) NewTask(i int, groupID string, parent int, created map[string]int) (NewTask, error) {
	step := r.Tasks[i]
	nt := NewTask{
		Title: step.Title, Role: step.Role, Files: slices.Clone(step.Files), WriteFiles: slices.Clone(step.WriteFiles),
		WorkflowID: r.WorkflowID, GroupID: groupID,
	}
	for _, k := range step.DependsOn {
		n, ok := created[k]
		if !ok {
			return NewTask{}, fmt.Errorf("Recipe %s has unresolved dependency %s", r.WorkflowID, k)
		}
		nt.DependsOn = append(nt.DependsOn, n)
	}
	if parent > 0 {
		nt.Description = fmt.Sprintf("Step `%s` of the `%s` workflow recipe (group `%s`), created from #%d.", step.Key, r.WorkflowID, groupID, parent)
	}
	return nt, nil
}

// RenderRecipe writes the recipe as the seed prints it: the workflow, the group, then per step
// `- <key>: [<role>] <title>` (the issue number instead of the key once created, from created;
// nil for a dry run) and `  deps: <keys|none>; writeFiles: <paths|none>`. A last line names the
// steps of writing roles (RoleWrites) that have no writeFiles.
func RenderRecipe(r Recipe, groupID string, created map[string]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow task recipe: %s\nGroup: %s\n", r.WorkflowID, groupID)
	var unscoped []string
	for _, t := range r.Tasks {
		id := t.Key
		if n, ok := created[t.Key]; ok {
			id = fmt.Sprintf("#%d", n)
		}
		fmt.Fprintf(&b, "- %s: [%s] %s\n", id, t.Role, t.Title)
		fmt.Fprintf(&b, "  deps: %s; writeFiles: %s\n", joinOrNone(t.DependsOn), joinOrNone(t.WriteFiles))
		if len(t.WriteFiles) == 0 && RoleWrites(t.Role) {
			unscoped = append(unscoped, t.Key)
		}
	}
	if len(unscoped) > 0 {
		fmt.Fprintf(&b, "Note: %s may change files but name no writeFiles: each one's first `run` proposes them (a read-only pass), and `accept` completes its block in place; until then orchestration gives it the project-wide lock, so it runs alone.\n", strings.Join(unscoped, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// RecipeTaskList is the task list the issue the recipe was asked for on gets: `- [ ] #N` per
// created step, in recipe order (GitHub shows each issue's title and state).
func RecipeTaskList(r Recipe, created map[string]int) string {
	var lines []string
	for _, t := range r.Tasks {
		if n, ok := created[t.Key]; ok {
			lines = append(lines, fmt.Sprintf("- [ ] #%d", n))
		}
	}
	return strings.Join(lines, "\n")
}

func joinOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
