package bot

import (
	"reflect"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
)

func TestParseTaskCreate(t *testing.T) {
	t.Parallel()
	cmd, ok := ParseCommand("/studio task create --role gameplay-programmer --file design/gdd.md --write-file src/player/jump.gd --write-file=tests/test_jump.gd --depends-on #3 --depends-on 4 --priority -2 --verify-command godot --verify-arg --headless --verify-arg -s Add coyote time", "/studio")
	if !ok || cmd.Err != nil || cmd.Verb != "task" {
		t.Fatalf("ParseCommand = %+v, %v", cmd, ok)
	}
	want := TaskOptions{Sub: "create", Task: policy.NewTask{
		Title: "Add coyote time", Role: "gameplay-programmer", Files: []string{"design/gdd.md"},
		WriteFiles: []string{"src/player/jump.gd", "tests/test_jump.gd"}, DependsOn: []int{3, 4}, Priority: -2,
		Verify: &policy.Verification{Command: "godot", Args: []string{"--headless", "-s"}},
	}}
	if !reflect.DeepEqual(cmd.Opts, want) {
		t.Errorf("opts = %+v\nwant %+v", cmd.Opts, want)
	}
	// Title words may come first, and `--` ends the flags.
	cmd, _ = ParseCommand("/studio task create Fix it --role qa-playtester -- --not-a-flag", "/studio")
	if o, _ := cmd.Opts.(TaskOptions); cmd.Err != nil || o.Task.Title != "Fix it --not-a-flag" || o.Task.Role != "qa-playtester" {
		t.Errorf("opts = %+v, err %v", cmd.Opts, cmd.Err)
	}
}

func TestParseTaskCreateUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{"/studio task", "`task` needs a subcommand: `task create`."},
		{"/studio task run 3", "`run` is not a subcommand of `task`"},
		{"/studio task create --role", "`--role` needs a value."},
		{"/studio task create --role a --role b Title", "give `--role` once"},
		{"/studio task create --role a --depends-on task-001 Title", "`--depends-on` takes an issue number such as `#12`, not `task-001`."},
		{"/studio task create --role a --depends-on #0 Title", "takes an issue number"},
		{"/studio task create --role a --priority high Title", "`--priority` takes an integer"},
		{"/studio task create --role a --verify-arg x Title", "`--verify-arg` needs `--verify-command`"},
		{"/studio task create --role a --workflow bugfix Title", "`/studio task` does not take the flag `--workflow`."},
	} {
		t.Run(tc.line, func(t *testing.T) {
			cmd, ok := ParseCommand(tc.line, "/studio")
			if !ok || cmd.Err == nil || cmd.Opts != nil {
				t.Fatalf("ParseCommand = %+v; want a usage error", cmd)
			}
			if !strings.Contains(cmd.Err.Error(), tc.want) || !strings.Contains(cmd.Err.Error(), "Usage: `/studio task create --role <role> <title>") {
				t.Errorf("error = %q; want %q and the usage", cmd.Err, tc.want)
			}
		})
	}
}

func TestParseWorkflowCreateTasks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want any
	}{
		{"/studio workflow create-tasks bugfix", RecipeOptions{ID: "bugfix"}},
		{"/studio workflow Create-Tasks --dry-run release-checklist", RecipeOptions{ID: "release-checklist", DryRun: true}},
		{"/studio workflow bugfix --dry-run", WorkflowOptions{ID: "bugfix", RunOptions: RunOptions{DryRun: true}}},
	} {
		cmd, ok := ParseCommand(tc.line, "/studio")
		if !ok || cmd.Err != nil || !reflect.DeepEqual(cmd.Opts, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.line, cmd.Opts, cmd.Err, tc.want)
		}
	}
}
