package policy

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestRoleOfLabel(t *testing.T) {
	tests := []struct {
		prefix, label, want string
		ok                  bool
	}{
		{"studio:", "studio:role/producer", "producer", true},
		{"studio:", "studio:role/", "", true},
		{"studio:", "studio:run", "", false},
		{"studio:", "studio:status/done", "", false},
		{"studio:", "Studio:role/producer", "", false},
		{"codex-", "codex-role/producer", "producer", true},
		{"codex-", "studio:role/producer", "", false},
		{"studio:", "", "", false},
	}
	for _, tt := range tests {
		if got, ok := RoleOfLabel(tt.prefix, tt.label); got != tt.want || ok != tt.ok {
			t.Errorf("RoleOfLabel(%q, %q) = %q, %v; want %q, %v", tt.prefix, tt.label, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLabelRoles(t *testing.T) {
	tests := []struct {
		name    string
		labels  []string
		trigger string
		want    []string
	}{
		{"none", []string{"bug", "studio:run"}, "", nil},
		{"one", []string{"bug", "studio:role/producer"}, "", []string{"producer"}},
		{"sorted", []string{"studio:role/qa-playtester", "studio:role/producer"}, "", []string{"producer", "qa-playtester"}},
		{"the trigger label counts", []string{"bug"}, "studio:role/producer", []string{"producer"}},
		{"the trigger label is not listed twice", []string{"studio:role/producer"}, "studio:role/producer", []string{"producer"}},
		{"the trigger label adds a second role", []string{"studio:role/qa-playtester"}, "studio:role/producer", []string{"producer", "qa-playtester"}},
		{"a run label as trigger is no role", []string{"studio:role/producer"}, "studio:run", []string{"producer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LabelRoles("studio:", tt.labels, tt.trigger); !slices.Equal(got, tt.want) {
				t.Errorf("LabelRoles = %q, want %q", got, tt.want)
			}
		})
	}
}

// testRoles stands in for prompts: three built-in roles and the custom roles a project defined.
func testRoles(custom map[string]Phase) func(string) (Phase, bool) {
	builtin := map[string]bool{"producer": true, "qa-playtester": true, "gameplay-programmer": true}
	return func(id string) (Phase, bool) {
		if builtin[id] {
			return PhaseForRole(id), true
		}
		p, ok := custom[id]
		return p, ok
	}
}

func unknownRole(id string) string { return fmt.Sprintf("Unknown studio role %q. Use ...", id) }

func TestResolveRole(t *testing.T) {
	custom := map[string]Phase{"custom-planner": PhasePlan, "custom-builder": PhaseImplement, "custom-reviewer": PhaseReview}
	writes := []string{"src/a.gd"}
	tests := []struct {
		name      string
		task      Task
		labels    []string
		trigger   string
		custom    map[string]Phase
		want      ResolvedRole
		wantError string
	}{
		{name: "block role", task: Task{Role: "gameplay-programmer", WriteFiles: writes},
			want: ResolvedRole{"gameplay-programmer", PhaseImplement}},
		{name: "label role", task: Task{WriteFiles: writes}, labels: []string{"bug", "studio:role/gameplay-programmer"},
			want: ResolvedRole{"gameplay-programmer", PhaseImplement}},
		{name: "the triggering label", task: Task{WriteFiles: writes}, trigger: "studio:role/qa-playtester",
			want: ResolvedRole{"qa-playtester", PhaseReview}},
		{name: "block and label agree", task: Task{Role: "producer"}, labels: []string{"studio:role/producer"},
			want: ResolvedRole{"producer", PhasePlan}},
		{name: "several role labels", task: Task{Role: "producer"}, labels: []string{"studio:role/qa-playtester", "studio:role/producer"},
			wantError: "the issue has several role labels (`producer`, `qa-playtester`); keep one"},
		{name: "several role labels, one by the trigger", task: Task{}, labels: []string{"studio:role/qa-playtester"}, trigger: "studio:role/producer",
			wantError: "the issue has several role labels (`producer`, `qa-playtester`); keep one"},
		{name: "a label role is quoted on one line", labels: []string{"studio:role/a\nb", "studio:role/c"},
			wantError: "the issue has several role labels (`a b`, `c`); keep one"},
		{name: "block and label disagree", task: Task{Role: "producer"}, labels: []string{"studio:role/qa-playtester"},
			wantError: "the task block says role `producer` but the label says `studio:role/qa-playtester`; make them agree or remove one"},
		{name: "no role", task: Task{WriteFiles: writes}, labels: []string{"studio:run"},
			wantError: "no role: add `role: <role-id>` to the task block or the label `studio:role/<role-id>`"},
		{name: "unknown block role", task: Task{Role: "producer_agent", WriteFiles: writes},
			wantError: `Unknown studio role "producer_agent". Use ...`},
		{name: "unknown label role", labels: []string{"studio:role/wizard"},
			wantError: `Unknown studio role "wizard". Use ...`},
		{name: "an empty label role is unknown", labels: []string{"studio:role/"},
			wantError: `Unknown studio role "". Use ...`},
		{name: "a custom role the caller does not know", task: Task{Role: "custom-planner"},
			wantError: `Unknown studio role "custom-planner". Use ...`},
		{name: "a custom planning role needs no writeFiles", task: Task{Role: "custom-planner"}, custom: custom,
			want: ResolvedRole{"custom-planner", PhasePlan}},
		{name: "a custom reviewing role needs no writeFiles", labels: []string{"studio:role/custom-reviewer"}, custom: custom,
			want: ResolvedRole{"custom-reviewer", PhaseReview}},
		{name: "a custom writing role", task: Task{Role: "custom-builder", WriteFiles: writes}, custom: custom,
			want: ResolvedRole{"custom-builder", PhaseImplement}},
		// The role comes back with the error: a run proposes the missing writeFiles.
		{name: "a custom writing role without writeFiles", task: Task{Role: "custom-builder"}, custom: custom,
			wantError: "the task block cannot be used: `writeFiles`: " + writeFilesRequired, want: ResolvedRole{"custom-builder", PhaseImplement}},
		{name: "a built-in writing role without writeFiles", task: Task{Role: "gameplay-programmer"},
			wantError: "the task block cannot be used: `writeFiles`: " + writeFilesRequired, want: ResolvedRole{"gameplay-programmer", PhaseImplement}},
		{name: "a read-only built-in role needs no writeFiles", task: Task{Role: "qa-playtester"},
			want: ResolvedRole{"qa-playtester", PhaseReview}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveRole(tt.task, RoleFacts{LabelPrefix: "studio:", Labels: tt.labels, TriggerLabel: tt.trigger,
				Lookup: testRoles(tt.custom), UnknownMessage: unknownRole})
			if tt.wantError != "" {
				if err == nil || err.Error() != tt.wantError || got != tt.want || MissingWriteFiles(err) != (tt.want != ResolvedRole{}) {
					t.Errorf("ResolveRole = %+v, %v\nwant error %s", got, err, tt.wantError)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ResolveRole = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestResolveRoleWriteFilesError: the writeFiles error of a parsed block keeps its line and stays
// a *TaskError under the wrapping.
func TestResolveRoleWriteFilesError(t *testing.T) {
	task, err := ParseTask("Do it.\n\n```studio\nrole: gameplay-programmer\nfiles: [a.gd]\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ResolveRole(task, RoleFacts{LabelPrefix: "studio:", Lookup: testRoles(nil), UnknownMessage: unknownRole})
	var te *TaskError
	if !errors.As(err, &te) || te.Field != "writeFiles" || te.Line != 3 {
		t.Fatalf("ResolveRole error = %v; want the block's writeFiles TaskError on line 3", err)
	}
	if err.Error() != "the task block cannot be used: line 3: `writeFiles`: "+writeFilesRequired {
		t.Errorf("error text = %q", err.Error())
	}
}

// TestResolveRoleFailsClosed: without a lookup no role is known; without a message the refusal is
// still given.
func TestResolveRoleFailsClosed(t *testing.T) {
	task := Task{Role: "producer"}
	if _, err := ResolveRole(task, RoleFacts{UnknownMessage: unknownRole}); err == nil || err.Error() != `Unknown studio role "producer". Use ...` {
		t.Errorf("nil Lookup: %v; want the unknown-role refusal", err)
	}
	if _, err := ResolveRole(task, RoleFacts{}); err == nil || err.Error() != `unknown studio role "producer"` {
		t.Errorf("nil Lookup and message: %v", err)
	}
}

// TestCheckWriteFilesByRole: CheckWriteFiles still judges by the built-in phase of the role.
func TestCheckWriteFilesByRole(t *testing.T) {
	tests := []struct {
		role   string
		files  []string
		wantOK bool
	}{
		{"gameplay-programmer", nil, false},
		{"gameplay-programmer", []string{"a.gd"}, true},
		{"producer", nil, true},
		{"qa-playtester", nil, true},
	}
	for _, tt := range tests {
		if err := CheckWriteFiles(Task{WriteFiles: tt.files}, tt.role); (err == nil) != tt.wantOK {
			t.Errorf("CheckWriteFiles(%s, %v) = %v", tt.role, tt.files, err)
		}
	}
}
