package bot

import "testing"

// The texts of task creation, recipes and the dependency gate, against their golden files
// (testdata/golden/texts/<name>.md; UPDATE_GOLDEN=1 rewrites them after a deliberate change).
func TestTaskTextsMatchTheirGoldenFiles(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"dependencies-unmet", dependencyRefusal("/studio", []string{"Task #9 depends on blocked task #4", "Task #9 depends on unknown task #999", "Task #9 depends on #5 (ready); complete it first"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/"+tt.name+".md", tt.text)
		})
	}
}
