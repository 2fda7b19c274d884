package actiontest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// reportWorld is the GitHub emulator with the sandbox's repository and one issue, for
// scripts/report-install-failure.
type reportWorld struct {
	emu   *ghemu.Server
	issue int
}

func newReportWorld(t *testing.T) *reportWorld {
	t.Helper()
	w, err := sandbox.New(sandbox.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "Make the jump snappier", Body: "..."})
	if err != nil {
		t.Fatal(err)
	}
	return &reportWorld{emu: w.Emu, issue: is.Number}
}

// env is what action.yml gives the script for a `/studio run` comment after a checksum mismatch;
// each case overrides some of it.
func (w *reportWorld) env(over map[string]string) []string {
	vars := map[string]string{
		"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_REPOSITORY": sandbox.Owner + "/" + sandbox.Repo,
		"GITHUB_API_URL": strings.TrimSuffix(w.emu.APIURL(), "/"), "GITHUB_SERVER_URL": w.emu.URL(), "GITHUB_RUN_ID": "4242",
		"STUDIO_TOKEN": sandbox.BotToken, "STUDIO_REPOSITORY": "codex-studio/studio-action",
		"STUDIO_FAILURE":         "checksum-mismatch",
		"STUDIO_FAILURE_MESSAGE": "checksum mismatch for studio-linux-amd64 of release v1.2.3: checksums.txt says 00ff, the download has 11ee.",
		"STUDIO_NUMBER":          strconv.Itoa(w.issue), "STUDIO_EVENT_ACTION": "created", "STUDIO_SENDER_TYPE": "User",
		"STUDIO_COMMAND": "true", "STUDIO_TRIGGER_LABEL": "false",
	}
	for k, v := range over {
		vars[k] = v
	}
	env := append(baseEnv(), "PATH="+os.Getenv("PATH"))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

func (w *reportWorld) report(t *testing.T, over map[string]string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "report-install-failure"))
	cmd.Env = append(w.env(over), "RUNNER_TEMP="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (w *reportWorld) botComments(number int) []string {
	var out []string
	for _, c := range w.emu.Comments(sandbox.Owner, sandbox.Repo, number) {
		if c.Author == sandbox.BotLogin {
			out = append(out, c.Body)
		}
	}
	return out
}

// A checksum mismatch on a `/studio run` comment: one comment by the job's token on the issue that
// says what failed, how to fix it, what the installer said and where the log is.
func TestReportInstallFailurePostsTheReasonAndTheFix(t *testing.T) {
	w := newReportWorld(t)
	out, err := w.report(t, nil)
	if err != nil {
		t.Fatalf("report-install-failure: %v\n%s", err, out)
	}
	comments := w.botComments(w.issue)
	if len(comments) != 1 {
		t.Fatalf("bot comments %q, want one\n%s", comments, out)
	}
	body := comments[0]
	for _, want := range []string{
		"<!-- studio:install-failure -->",
		"does not match the release's checksum",
		"neither installed nor run",
		"Pin another release (`uses: codex-studio/studio-action@vX.Y.Z`)",
		"```text\nchecksum mismatch for studio-linux-amd64 of release v1.2.3: checksums.txt says 00ff, the download has 11ee.\n```",
		"(" + w.emu.URL() + "/acme/hop/actions/runs/4242)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(out, sandbox.BotToken) {
		t.Errorf("the token is in the script's output:\n%s", out)
	}
	if !strings.Contains(out, "reported the failure (checksum-mismatch) on #1") {
		t.Errorf("the log does not say the failure was reported:\n%s", out)
	}
}

// Each kind install-studio and run-studio write has its own reason and fix.
func TestReportInstallFailureNamesEachKind(t *testing.T) {
	w := newReportWorld(t)
	for kind, want := range map[string]string{
		"no-go":                "add `actions/setup-go`",
		"no-release-assets":    "the release has no binary for this runner yet",
		"build-failed":         "building the studio from source failed",
		"download-failed":      "could not be downloaded",
		"checksum-unlisted":    "does not list the binary for this runner",
		"unsupported-platform": "Linux or macOS, x64 or arm64",
		"no-codex":             "`actions/setup-node`",
		"":                     "installing the studio failed",
	} {
		before := len(w.botComments(w.issue))
		if out, err := w.report(t, map[string]string{"STUDIO_FAILURE": kind, "STUDIO_FAILURE_MESSAGE": ""}); err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, out)
		}
		comments := w.botComments(w.issue)
		if len(comments) != before+1 {
			t.Fatalf("%s: no new comment", kind)
		}
		if body := comments[len(comments)-1]; !strings.Contains(body, want) || strings.Contains(body, "```") {
			t.Errorf("%s: comment lacks %q (or has an empty code block):\n%s", kind, want, body)
		}
	}
}

// The installer's message can carry text from outside (a tampered checksums.txt's first field, a
// ref): it reaches the comment only as plain characters inside the code block, on one line.
func TestReportInstallFailureDefusesTheMessage(t *testing.T) {
	w := newReportWorld(t)
	hostile := "checksums.txt says ```\n@everyone <script>x</script> \"quoted\" \\n `rm -rf` $(id) [link](http://evil)\r\n# heading"
	if out, err := w.report(t, map[string]string{"STUDIO_FAILURE_MESSAGE": hostile}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	comments := w.botComments(w.issue)
	if len(comments) != 1 {
		t.Fatalf("comments %q", comments)
	}
	body := comments[0]
	_, block, ok := strings.Cut(body, "```text\n")
	if !ok {
		t.Fatalf("no code block:\n%s", body)
	}
	msg, rest, ok := strings.Cut(block, "\n```")
	if !ok || strings.Contains(rest, "```") {
		t.Fatalf("the message closed the code block early or opened another:\n%s", body)
	}
	for _, bad := range []string{"`", "\"", "\\", "$", "[", "]", "\n", "\r"} {
		if strings.Contains(msg, bad) {
			t.Errorf("message in the comment keeps %q: %q", bad, msg)
		}
	}
	if !strings.Contains(msg, "checksums.txt says") {
		t.Errorf("message lost its plain text: %q", msg)
	}
}

// Only an event where someone asked for a run gets a comment: never every comment on every issue
// while the install is broken, and never an event a bot sent (a report must not start a loop).
func TestReportInstallFailureReportsOnlyWhatAskedForARun(t *testing.T) {
	w := newReportWorld(t)
	pr := w.issue // the script treats the number the same way for issues and pull requests
	for _, c := range []struct {
		name   string
		over   map[string]string
		posted bool
	}{
		{"a comment without the trigger phrase", map[string]string{"STUDIO_COMMAND": "false"}, false},
		{"an edited comment", map[string]string{"STUDIO_EVENT_ACTION": "edited"}, false},
		{"a bot's comment", map[string]string{"STUDIO_SENDER_TYPE": "Bot"}, false},
		{"a push to a pull request", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "STUDIO_EVENT_ACTION": "synchronize"}, false},
		{"an issue labelled with another label", map[string]string{"GITHUB_EVENT_NAME": "issues", "STUDIO_EVENT_ACTION": "labeled", "STUDIO_COMMAND": "false"}, false},
		{"an event without an issue", map[string]string{"STUDIO_NUMBER": ""}, false},
		{"a number that is not one", map[string]string{"STUDIO_NUMBER": "1; rm -rf /"}, false},
		{"no token", map[string]string{"STUDIO_TOKEN": ""}, false},
		{"the run label", map[string]string{"GITHUB_EVENT_NAME": "issues", "STUDIO_EVENT_ACTION": "labeled", "STUDIO_COMMAND": "false", "STUDIO_TRIGGER_LABEL": "true"}, true},
		{"a review", map[string]string{"GITHUB_EVENT_NAME": "pull_request_review", "STUDIO_EVENT_ACTION": "submitted", "STUDIO_COMMAND": "false", "STUDIO_NUMBER": strconv.Itoa(pr)}, true},
		{"a dispatched task, sent by the studio's App", map[string]string{"GITHUB_EVENT_NAME": "workflow_dispatch", "STUDIO_EVENT_ACTION": "", "STUDIO_SENDER_TYPE": "Bot", "STUDIO_COMMAND": "false"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(w.botComments(w.issue))
			out, err := w.report(t, c.over)
			if err != nil {
				t.Fatalf("the script failed (it must never fail the job further): %v\n%s", err, out)
			}
			got := len(w.botComments(w.issue)) - before
			if c.posted && got != 1 {
				t.Errorf("posted %d comments, want 1:\n%s", got, out)
			}
			if !c.posted && (got != 0 || !strings.Contains(out, "::notice") || !strings.Contains(out, "not reported")) {
				t.Errorf("posted %d comments, want none and a notice saying why:\n%s", got, out)
			}
		})
	}
}

// A token that may not comment (GitHub answers 403 "Resource not accessible by integration"): the
// job is already failed, so the script says which permission is missing and exits 0.
func TestReportInstallFailureWithoutPermissionWarns(t *testing.T) {
	w := newReportWorld(t)
	w.emu.InjectFailure("POST", "/repos/acme/hop/issues/"+strconv.Itoa(w.issue)+"/comments", 403,
		`{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`)
	out, err := w.report(t, nil)
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "::warning") || !strings.Contains(out, "HTTP 403") || !strings.Contains(out, "issues: write") {
		t.Errorf("no warning naming the status and the permission:\n%s", out)
	}
	if n := len(w.botComments(w.issue)); n != 0 {
		t.Errorf("%d comments, want none", n)
	}
}
