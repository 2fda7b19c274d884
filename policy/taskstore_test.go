package policy

import (
	"slices"
	"strings"
	"testing"
)

// A seed's v1 store (string dependencies) and v2 store ({taskId}) read alike; the import opens the
// open tasks after their dependencies, drops a dependency on a done task, and leaves out a
// cancelled task and the task waiting for it.
func TestPlanTaskImportOfASeedStore(t *testing.T) {
	v1 := `{"schemaVersion":1,"tasks":[
	 {"id":"task-003","title":"Test the jump","role":"qa-playtester","status":"ready","dependencies":["task-002"]},
	 {"id":"task-002","title":"Implement the jump","role":"gameplay-programmer","status":"blocked","writeFiles":["src/player/jump.gd"],"dependencies":["task-001"]},
	 {"id":"task-001","title":"Design the jump","role":"game-designer","status":"done"},
	 {"id":"task-004","title":"Old idea","role":"producer","status":"cancelled"},
	 {"id":"task-005","title":"Follow the old idea","role":"producer","status":"ready","dependencies":[{"taskId":"task-004","requiredStatus":"done"}]}]}`
	tasks, err := ParseTaskStore([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanTaskImport(tasks)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range plan.Open {
		ids = append(ids, o.ID+"<"+strings.Join(o.DependsOn, ","))
	}
	if want := []string{"task-002<", "task-003<task-002"}; !slices.Equal(ids, want) {
		t.Errorf("opened %v, want %v", ids, want)
	}
	if want := []string{"task-001 (done)", "task-004 (cancelled)", "task-005 (its dependency task-004 is not opened)"}; !slices.Equal(plan.Skipped, want) {
		t.Errorf("left out %q, want %q", plan.Skipped, want)
	}
	for _, bad := range []struct{ store, want string }{
		{`{`, "Invalid task store JSON"},
		{`{"schemaVersion":3,"tasks":[]}`, "Invalid task store schema"},
		{`{"schemaVersion":2,"tasks":[{"id":"a","title":"x","role":"producer","status":"ready"},{"id":"a","title":"y","role":"producer","status":"ready"}]}`, "Duplicate task id: a"},
		{`{"schemaVersion":2,"tasks":[{"id":"a","title":"x","role":"producer","status":"later"}]}`, "status \"later\""},
	} {
		if _, err := ParseTaskStore([]byte(bad.store)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.store, err, bad.want)
		}
	}
	unknown, _ := ParseTaskStore([]byte(`{"schemaVersion":2,"tasks":[{"id":"a","title":"x","role":"producer","status":"ready","dependencies":[{"taskId":"zz"}]}]}`))
	if _, err := PlanTaskImport(unknown); err == nil || err.Error() != "Unknown dependency task: zz" {
		t.Errorf("unknown dependency: %v", err)
	}
	cycle, _ := ParseTaskStore([]byte(`{"schemaVersion":2,"tasks":[{"id":"a","title":"x","role":"producer","status":"ready","dependencies":["b"]},{"id":"b","title":"y","role":"producer","status":"ready","dependencies":["a"]}]}`))
	if _, err := PlanTaskImport(cycle); err == nil || !strings.Contains(err.Error(), "depends on itself") {
		t.Errorf("cycle: %v", err)
	}
}
