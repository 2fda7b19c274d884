package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestRecipesAreTheSeeds(t *testing.T) {
	if got := RecipeIDs(); !reflect.DeepEqual(got, []string{"vertical-slice", "bugfix", "ui-ux-review", "release-checklist"}) {
		t.Fatalf("RecipeIDs = %q", got)
	}
	type step struct{ key, role, deps string }
	want := map[string][]step{
		"vertical-slice":    {{"plan", "producer", ""}, {"design", "game-designer", "plan"}, {"implement", "gameplay-programmer", "design"}, {"qa", "qa-playtester", "implement"}},
		"bugfix":            {{"repro", "qa-playtester", ""}, {"fix", "gameplay-programmer", "repro"}, {"verify", "qa-playtester", "fix"}},
		"ui-ux-review":      {{"ux", "ui-ux-designer", ""}, {"accessibility", "accessibility-specialist", "ux"}, {"qa", "qa-playtester", "accessibility"}},
		"release-checklist": {{"qa", "qa-playtester", ""}, {"perf", "performance-analyst", ""}, {"security", "security-engineer", ""}, {"release", "release-manager", "qa,perf,security"}},
	}
	files := map[string][]string{"vertical-slice": {"design/gdd.md"}, "bugfix": nil, "ui-ux-review": {"design/gdd.md"}, "release-checklist": {"production/timeline.md"}}
	for id, steps := range want {
		r, err := FindRecipe(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Tasks) != len(steps) {
			t.Fatalf("%s: %d steps", id, len(r.Tasks))
		}
		seen := map[string]bool{}
		for i, s := range steps {
			rt := r.Tasks[i]
			if rt.Key != s.key || rt.Role != s.role || strings.Join(rt.DependsOn, ",") != s.deps || rt.Title == "" ||
				!reflect.DeepEqual(rt.Files, files[id]) || len(rt.WriteFiles) != 0 {
				t.Errorf("%s step %d = %+v, want %+v", id, i, rt, s)
			}
			for _, d := range rt.DependsOn {
				if !seen[d] {
					t.Errorf("%s: %s depends on %s, which is not an earlier step", id, rt.Key, d)
				}
			}
			seen[rt.Key] = true
		}
	}
}

func TestFindRecipeErrors(t *testing.T) {
	known := func(id string) bool { return id == "sprint-status" || id == "bugfix" }
	if _, err := FindRecipe("sprint-status", known); err == nil || err.Error() != `Workflow "sprint-status" does not have a task recipe` {
		t.Errorf("known workflow without recipe: %v", err)
	}
	if _, err := FindRecipe("nope", known); err == nil || err.Error() != `Unknown workflow "nope"` {
		t.Errorf("unknown workflow: %v", err)
	}
	r, _ := FindRecipe("bugfix", known)
	r.Tasks[0].Title = "changed"
	r.Tasks[1].DependsOn[0] = "changed"
	if again, _ := FindRecipe("bugfix", known); again.Tasks[0].Title == "changed" || again.Tasks[1].DependsOn[0] == "changed" {
		t.Error("FindRecipe must return a copy")
	}
}

func TestRenderRecipe(t *testing.T) {
	r, _ := FindRecipe("vertical-slice", nil)
	gid := RecipeGroupID(r.WorkflowID, "1a2b3c4d")
	checkGolden(t, "recipe-vertical-slice-dry-run.txt", RenderRecipe(r, gid, nil))
	checkGolden(t, "recipe-vertical-slice-created.txt", RenderRecipe(r, gid, map[string]int{"plan": 21, "design": 22, "implement": 23, "qa": 24}))
	if got := RecipeTaskList(r, map[string]int{"plan": 21, "design": 22}); got != "- [ ] #21\n- [ ] #22" {
		t.Errorf("RecipeTaskList = %q", got)
	}
	scoped := Recipe{WorkflowID: "x", Tasks: []RecipeTask{{Key: "a", Role: "gameplay-programmer", Title: "A", WriteFiles: []string{"a.go"}}, {Key: "b", Role: "producer", Title: "B"}}}
	if got := RenderRecipe(scoped, "x-1", nil); strings.Contains(got, "Note:") || !strings.Contains(got, "deps: none; writeFiles: a.go") {
		t.Errorf("scoped recipe = %q", got)
	}
}

// TestRecipeCreatesTasks creates a recipe's issues in order, as the command will: each step
// validated, rendered, read back, its dependencies the issues of earlier steps; then the graph
// plans, and the writing steps without writeFiles run one at a time under the project-wide lock.
func TestRecipeCreatesTasks(t *testing.T) {
	r, _ := FindRecipe("release-checklist", nil)
	gid := RecipeGroupID(r.WorkflowID, "cafe0123")
	created := map[string]int{}
	var graph []GraphTask
	for i, step := range r.Tasks {
		nt, err := r.NewTask(i, gid, 7, created)
		if err != nil {
			t.Fatal(err)
		}
		nt, err = ValidateNewTask(nt, func(n int) bool { return n >= 100 && n < 100+len(created) })
		if err != nil {
			t.Fatal(err)
		}
		_, body := RenderTaskIssue(nt)
		task, err := ParseTask(body)
		if err != nil {
			t.Fatalf("%s: %v\n%s", step.Key, err, body)
		}
		deps, _ := task.Dependencies()
		if task.WorkflowID != "release-checklist" || task.GroupID != gid || !strings.Contains(task.Description, "created from #7") {
			t.Fatalf("%s read back as %+v", step.Key, task)
		}
		issue := 100 + i
		created[step.Key] = issue
		graph = append(graph, GraphTask{Issue: issue, Title: nt.Title, Role: nt.Role, DependsOn: deps, WorkflowID: task.WorkflowID, WriteFiles: task.WriteFiles, ReadOnly: !RoleWrites(nt.Role)})
	}
	if got := graph[3].DependsOn; !reflect.DeepEqual(got, []int{100, 101, 102}) {
		t.Fatalf("release depends on %v", got)
	}
	plan, err := PlanOrchestration(graph, OrchestrateRequest{Workflow: "release-checklist", MaxConcurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	// qa is read-only; perf and security both take the project-wide lock, so not together.
	if !reflect.DeepEqual(plan.Waves, [][]int{{100, 101}, {102}, {103}}) {
		t.Fatalf("waves = %v", plan.Waves)
	}
	if _, err := r.NewTask(3, gid, 0, map[string]int{"qa": 1}); err == nil || err.Error() != "Recipe release-checklist has unresolved dependency perf" {
		t.Fatalf("unresolved: %v", err)
	}
}
