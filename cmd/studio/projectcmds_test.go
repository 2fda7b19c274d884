package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The seed's read-only project commands: status, resume, templates list|show and context. They
// print from the checkout and write nothing.
func TestProjectCommands(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	before := snapshotTree(t, root)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"status"}, []string{"Stage: prototype", "Phase: Initialization\n", "Studio mode: fast-prototype", "Workflows: 61 built-in", "Custom pack: "}},
		{[]string{"resume"}, []string{"Stage: prototype", "studio run producer --project " + root + ` "Summarize current project state"`}},
		{[]string{"templates", "list"}, []string{"market_analysis  ", "market-analyst", "bug_report"}},
		{[]string{"templates", "show", "bug_report"}, []string{"#"}},
		{[]string{"context", "studio"}, []string{"Context every run starts from:", "- AGENTS.md"}},
		{[]string{"context", "role", "producer"}, []string{"Role: producer", "Phase: plan", "Writes: false", "Model: gpt-5.6-"}},
		{[]string{"context", "workflow", "sprint-status"}, []string{"Role: studio-orchestrator", "Model: gpt-5.6-luna (low)", "Context files: AGENTS.md, .codex/studio.json, .codex/workflows/sprint-status.md"}},
		{[]string{"context", "task", "fix", "the", "crash", "bug"}, []string{"Workflows: bugfix", "Templates: bug_report"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(append(tt.args, "--project", root), nil)
		if code != exitOK {
			t.Errorf("%v: exit %d %s", tt.args, code, errOut)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
	for args, want := range map[string]string{"templates show bug_reprot": `Did you mean "bug_report"?`, "context role wizard": "Unknown studio role", "context workflow sprnt-status": `Did you mean "sprint-status"?`} {
		if code, _, errOut := runCLI(append(strings.Fields(args), "--project", root), nil); code != exitError || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d %q, want %q", args, code, errOut, want)
		}
	}
	if after := snapshotTree(t, root); after != before {
		t.Error("a read-only project command changed the checkout")
	}
}

func snapshotTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + "\x00" + string(data) + "\x00")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
