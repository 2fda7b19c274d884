package texts

import (
	"testing"

	"github.com/codex-studio/studio-action/policy"
)

// The texts of task creation, recipes and the dependency gate, against their golden files
// (testdata/golden/texts/<name>.md; UPDATE_GOLDEN=1 rewrites them after a deliberate change).
func TestTaskTextsMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	bugfix, err := policy.FindRecipe("bugfix", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
	}{
		{"task-created", TaskCreatedReply("/studio", 12, policy.NewTask{Title: "Add coyote time", Role: "gameplay-programmer",
			WriteFiles: []string{"src/player/jump.gd"}, Files: []string{"design/gdd.md"}, DependsOn: []int{3, 4}, Priority: 2,
			Verify: &policy.Verification{Command: "godot", Args: []string{"--headless", "-s", "tests/run.gd"}}}, true)},
		{"task-created-plain", TaskCreatedReply("/studio", 12, policy.NewTask{Title: "Review the `jump` feel", Role: "qa-playtester"}, false)},
		{"task-created-writer-without-writefiles", TaskCreatedReply("/studio", 12, policy.NewTask{Title: "Fix the jump", Role: "gameplay-programmer"}, true)},
		{"task-refused", TaskRefusedReply("Unknown dependency task: #999")},
		{"recipe-dry-run", RecipeDryRunReply(7, policy.RenderRecipe(bugfix, "bugfix-0a1b2c3d", nil))},
		{"recipe-created", RecipeCreatedReply("/studio", 7, 3, policy.RenderRecipe(bugfix, "bugfix-0a1b2c3d", map[string]int{"repro": 8, "fix": 9, "verify": 10}), nil)},
		{"recipe-created-with-notes", RecipeCreatedReply("/studio", 7, 3, policy.RenderRecipe(bugfix, "bugfix-0a1b2c3d", map[string]int{"repro": 8, "fix": 9, "verify": 10}),
			[]string{"#8 is not a sub-issue of #7: GitHub refused the link (Sub issue may only have one parent)"})},
		{"recipe-task-list", RecipeTaskListSection("bugfix", "bugfix-0a1b2c3d", policy.RecipeTaskList(bugfix, map[string]int{"repro": 8, "fix": 9, "verify": 10}))},
		{"dependencies-unmet", DependencyRefusal("/studio", []string{"Task #9 depends on blocked task #4", "Task #9 depends on unknown task #999", "Task #9 depends on #5 (ready); complete it first"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/"+tt.name+".md", tt.text)
		})
	}
}
