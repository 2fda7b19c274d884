package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

// issueAt reads an issue, and whether it exists.
func (w *world) issueAt(n int) (ghemu.Issue, bool) {
	is, err := w.Emu.Issue(sandbox.Owner, sandbox.Repo, n)
	return is, err == nil
}

// lastIssue is the highest issue number the repository has.
func (w *world) lastIssue() int {
	n := 0
	for {
		if _, ok := w.issueAt(n + 1); !ok {
			return n
		}
		n++
	}
}

// replies are the bot's comments on an issue other than its status comment.
func (w *world) replies(n int) []string {
	var out []string
	for _, c := range w.botComments(n) {
		if !strings.HasPrefix(c.Body, "<!-- studio:status ") {
			out = append(out, c.Body)
		}
	}
	return out
}

// `/studio task create` on any issue opens a task issue: the title, the task block from the
// flags, the labels of a ready task of the role; and replies with its number. No Codex runs.
func TestTaskCreateCommandOpensATaskIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	tracking := w.issue("Milestone 1", "The jump milestone.")
	dep := w.issue("Design the jump", "design", "studio:task", "studio:status/done")
	line := fmt.Sprintf("/studio task create --role gameplay-programmer --file design/gdd.md --write-file src/player/jump.gd --write-file ./tests/test_jump.gd --depends-on #%d --priority 2 --verify-command godot --verify-arg --headless --verify-arg -s Add coyote time", dep)
	commentID, payload := w.comment(tracking, sandbox.Writer, line)
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	if len(w.invocations()) != 0 {
		t.Errorf("codex ran %d times", len(w.invocations()))
	}
	n := w.lastIssue()
	is, _ := w.issueAt(n)
	if n != dep+1 || is.Title != "Add coyote time" || is.Author != sandbox.BotLogin {
		t.Fatalf("issue #%d = %+v", n, is)
	}
	wantTitle, wantBody := policy.RenderTaskIssue(policy.NewTask{Title: "Add coyote time", Role: "gameplay-programmer",
		Files: []string{"design/gdd.md"}, WriteFiles: []string{"src/player/jump.gd", "tests/test_jump.gd"}, DependsOn: []int{dep}, Priority: 2,
		Verify: &policy.Verification{Command: "godot", Args: []string{"--headless", "-s"}}})
	if is.Title != wantTitle || is.Body != wantBody {
		t.Errorf("body = %q\nwant %q", is.Body, wantBody)
	}
	task, err := policy.ParseTask(is.Body)
	if err != nil || task.Role != "gameplay-programmer" || !slices.Equal(task.DependsOn, []string{fmt.Sprintf("#%d", dep)}) || task.Priority != 2 {
		t.Errorf("the body reads back as %+v, %v", task, err)
	}
	if got, want := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n), []string{"studio:task", "studio:role/gameplay-programmer", "studio:status/ready"}; !slices.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	replies := w.replies(tracking)
	if len(replies) != 1 || !strings.Contains(replies[0], fmt.Sprintf("created task #%d, `Add coyote time`: role `gameplay-programmer`", n)) || !strings.HasPrefix(replies[0], "> /studio task create") {
		t.Errorf("replies = %q", replies)
	}
	if r := w.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, commentID); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("reactions = %+v", r)
	}
	// The tracking issue is no task: it gets no status label.
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, tracking); len(labels) != 0 {
		t.Errorf("the issue typed on got labels %v", labels)
	}

	// The same comment delivered again creates nothing more.
	res = w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "skipped" || w.lastIssue() != n {
		t.Errorf("re-delivered: status %q, last issue #%d", res.outputs["status"], w.lastIssue())
	}
}

// A custom role of the default branch can be a task's role.
func TestTaskCreateAcceptsACustomRole(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/studio/config.json"] = levelDesignerPack
	files[".codex/custom/roles/level-designer.md"] = "You design levels.\n"
	w := newWorld(t, files)
	tracking := w.issue("Levels", "Level work.")
	_, payload := w.comment(tracking, sandbox.Writer, "/studio task create --role custom-level-designer --write-file levels/level2.txt Lay out level 2")
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%q", res.outputs["status"], w.replies(tracking))
	}
	if got := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, tracking+1); !slices.Contains(got, "studio:role/custom-level-designer") {
		t.Errorf("labels = %v", got)
	}
}

// A task that cannot be created is refused with the seed's text, and nothing is created.
func TestTaskCreateRefusalsCreateNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line, want, status string
	}{
		{"unknown dependency", "/studio task create --role qa-playtester --depends-on #999 Check it", "no task was created: Unknown dependency task: #999", "refused"},
		{"dependency is a pull request", "/studio task create --role qa-playtester --depends-on #PULL Check it", "no task was created: Unknown dependency task: #", "refused"},
		{"unknown role", "/studio task create --role wizard Check it", `no task was created: Unknown studio role "wizard".`, "refused"},
		{"no title", "/studio task create --role qa-playtester", "no task was created: task title is required", "refused"},
		{"no role", "/studio task create Check it", "no task was created: task role is required: give --role <role>", "refused"},
		{"glob", "/studio task create --role gameplay-programmer --write-file src/*.gd Fix it", "no task was created: --write-file must be a literal relative file path, not a glob", "refused"},
		{"escaping path", "/studio task create --role gameplay-programmer --write-file ../x.gd Fix it", "no task was created: --write-file", "refused"},
		{"usage", "/studio task create --role qa-playtester --owner me Check it", "`/studio task` does not take the flag `--owner`.", "refused"},
		{"subcommand", "/studio task delete 3", "`delete` is not a subcommand of `task`", "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, nil)
			tracking := w.issue("Milestone", "m")
			line := tc.line
			if strings.Contains(line, "#PULL") {
				pr := w.openPull(t)
				line = strings.ReplaceAll(line, "#PULL", fmt.Sprintf("#%d", pr))
			}
			last := w.lastIssue()
			_, payload := w.comment(tracking, sandbox.Writer, line)
			res := w.run("issue_comment", payload, nil)
			if res.outputs["status"] != tc.status {
				t.Errorf("status %q, want %q", res.outputs["status"], tc.status)
			}
			if w.lastIssue() != last {
				t.Errorf("an issue was created: #%d", w.lastIssue())
			}
			replies := w.replies(tracking)
			if len(replies) != 1 || !strings.Contains(replies[0], tc.want) {
				t.Errorf("replies = %q, want one with %q", replies, tc.want)
			}
		})
	}
}

// openPull opens a pull request in the world and returns its number.
func (w *world) openPull(t *testing.T) int {
	t.Helper()
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "feature", ghemu.CommitSpec{Message: "change", Files: map[string]string{"README.md": "# Hop!\n"}}); err != nil {
		t.Fatal(err)
	}
	pr, err := w.Emu.CreatePull(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.PullSpec{Title: "A change", Head: "feature", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return pr.Number
}

// A repository without a studio configuration gets no tasks: no run of theirs could start.
func TestTaskCreateNeedsAStudioConfiguration(t *testing.T) {
	t.Parallel()
	w := newWorld(t, map[string]string{"README.md": "# Hop\n"})
	tracking := w.issue("Milestone", "m")
	_, payload := w.comment(tracking, sandbox.Writer, "/studio task create --role qa-playtester Check it")
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "refused" || w.lastIssue() != tracking {
		t.Fatalf("status %q, last issue #%d", res.outputs["status"], w.lastIssue())
	}
	if replies := w.replies(tracking); len(replies) != 1 || !strings.Contains(replies[0], "no .codex/studio.json on its default branch") {
		t.Errorf("replies = %q", replies)
	}
}
