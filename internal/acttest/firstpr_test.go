//go:build linux

package acttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// writerToken is the team member's own token, for their push and their merge.
const writerToken = "ghp_teamWriterToken0123456789abcdef"

// A new team, from a repository with a game and no studio to a merged studio pull request, in
// the three steps of README's Quick start, each played as the README writes it:
//
//  1. Get the CLI (README's download block: the release asset and checksums.txt, checked with
//     sha256sum) and run README's two commands in a clone of the repository: `studio init`, then
//     git add, commit and push to the emulator over real git.
//  2. The key: OPENAI_API_KEY is a secret of the act run.
//  3. An issue as the Studio task form init wrote renders it, and `/studio run` from a writer.
//
// act then runs the workflow init wrote, with the action at @v1 installed from its verified
// release, and the real Codex CLI talking to the scripted model server. init's default studio
// mode, guided-studio, makes the path three events: `/studio run` (a draft pull request with the
// plan), the writer's approval of the plan (the implementation, the studio review), and, once the
// writer marked the pull request ready, their approval of its head commit (studio/gate). The
// writer then merges through the API and the change is on main.
//
// The times of each step and each act run are logged, never asserted.
func TestThreeStepsFromNothingToAMergedPullRequest(t *testing.T) {
	t.Parallel()
	codex := codextest.Bin(t)
	if filepath.Base(codex) != "codex" {
		t.Fatalf("the Codex CLI at %s is not named codex: the workflow init writes runs `codex` from PATH", codex)
	}
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		// The plan, read-only.
		fakemodel.Reply(fakemodel.Message("1. Raise JUMP_VELOCITY in src/player/jump.gd.\n2. Add tests/test_jump.gd.")),
		// The implementation: Codex's apply_patch tool writes both files, then it reports.
		fakemodel.Reply(fakemodel.Patch("p1", "*** Begin Patch\n*** Update File: src/player/jump.gd\n@@\n-const JUMP_VELOCITY = -300.0\n+const JUMP_VELOCITY = -420.0\n*** Add File: tests/test_jump.gd\n+extends Node\n+# the jump is snappier\n*** End Patch\n")),
		fakemodel.Reply(fakemodel.Message("Raised the jump velocity and added a test.")),
		// The studio review.
		fakemodel.Reply(fakemodel.Message(`{"blockers":[],"warnings":[],"summary":"The change is small and tested.","needsFix":false}`)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	w := newTeamWorld(t)
	w.publish(releaseTag, map[string][]byte{release.asset: release.binary, "checksums.txt": release.checksums})
	// A runner with the Codex CLI installed: the workflow's default codex-path, `codex`, finds it.
	w.path = filepath.Dir(codex) + string(os.PathListSeparator) + os.Getenv("PATH")
	begin := time.Now()

	// Step 1: the CLI, init, and the push.
	start := time.Now()
	team := w.teamMember()
	team.getTheCLI(readmeBlock(t, "sha256sum --check"))
	setUp := readmeBlock(t, "studio init")
	if len(setUp) != 2 || !strings.HasPrefix(setUp[0], "studio init ") || !strings.HasPrefix(setUp[1], "git add ") {
		t.Fatalf("README's Quick start set-up block is not `studio init ...` then `git add ...`: %q", setUp)
	}
	before := team.files()
	team.sh(setUp[0])
	wrote := team.newFiles(before)
	initFiles := []string{".codex/studio.json", ".github/ISSUE_TEMPLATE/studio-task.yml", ".github/workflows/studio.yml", "AGENTS.md"}
	if !slices.Equal(wrote, initFiles) {
		t.Fatalf("studio init wrote %q, want only what the team owns, %q", wrote, initFiles)
	}
	quickStart := readmeSection(t)
	for _, f := range []string{".codex/studio.json", "AGENTS.md", ".github/workflows/studio.yml", "**Studio task** issue form"} {
		if !strings.Contains(quickStart, f) {
			t.Errorf("README's Quick start does not name %q, which init writes", f)
		}
	}
	team.sh(setUp[1])
	if dirty := team.git("status", "--porcelain"); dirty != "" {
		t.Errorf("README's git add left what init wrote uncommitted:\n%s", dirty)
	}
	for _, f := range initFiles {
		pushed, err := w.sw.Emu.ReadFile(sandbox.Owner, sandbox.Repo, "main", f)
		local, _ := os.ReadFile(filepath.Join(team.dir, f))
		if err != nil || !bytes.Equal(pushed, local) {
			t.Fatalf("main lacks %s as init wrote it (%v): the push did not land", f, err)
		}
	}
	step1 := time.Since(start)
	t.Logf("step 1 (download and check the CLI, init, commit, push): %s", step1.Round(10*time.Millisecond))

	// Step 2: the key. act's secrets file holds OPENAI_API_KEY (world.act). The only test-only
	// change to what init wrote: the action's openai-base-url points at the scripted model server.
	start = time.Now()
	w.runTheWorkflowInitWrote(model.URL)
	step2 := time.Since(start)

	// Step 3: an issue from the Studio task form, and `/studio run`.
	start = time.Now()
	form := readFile(t, filepath.Join(team.dir, ".github/ISSUE_TEMPLATE/studio-task.yml"))
	title, body, labels := fillTaskForm(t, form, map[string]string{
		"role": "gameplay-programmer", "objective": "Make the jump feel snappier.",
		"writeFiles": "src/player/jump.gd\ntests/test_jump.gd", "files": "design/gdd.md",
	})
	is, err := w.sw.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: title, Body: body, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	n := is.Number
	commentID, err := w.sw.Emu.AddComment(sandbox.Owner, sandbox.Repo, n, sandbox.Writer, "/studio run")
	if err != nil {
		t.Fatal(err)
	}
	payload, err := w.sw.Emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, n, commentID, sandbox.Writer)
	if err != nil {
		t.Fatal(err)
	}
	var runs []time.Duration
	res, took := w.actOn("issue_comment", payload)
	runs = append(runs, took)
	step3 := time.Since(start)
	if status := studioStatus(res.log); res.err != nil || status != "awaiting-approval" {
		t.Fatalf("/studio run: act %v, status %q, want a plan awaiting approval\n%s", res.err, status, res.log)
	}
	if labels := w.sw.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/awaiting-approval") {
		t.Errorf("the task issue's labels after /studio run: %v", labels)
	}
	if !strings.Contains(res.log, "(release "+releaseTag+", sha256 ") || strings.Contains(res.log, "go build") {
		t.Errorf("the runner did not install the verified release for @v1 (or built it):\n%s", res.log)
	}
	pulls := w.sw.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	branch := fmt.Sprintf("studio/task-%d", n)
	if len(pulls) != 1 || pulls[0].Head != branch || !pulls[0].Draft || pulls[0].Author != sandbox.BotLogin {
		t.Fatalf("after /studio run: pull requests %+v, want the bot's draft from %s", pulls, branch)
	}
	pr := pulls[0]
	mustHave(t, "the plan pull request", pr.Body, "Raise JUMP_VELOCITY in src/player/jump.gd", "**Approving this pull request starts the implementation**")

	// The plan's approval: the implementation, reviewed.
	approval, payload := w.approve(pr.Number)
	res, took = w.actOn("pull_request_review", payload)
	runs = append(runs, took)
	if status := studioStatus(res.log); res.err != nil || status != "done" {
		t.Fatalf("the plan's approval (review %d): act %v, status %q, want done\n%s", approval, res.err, status, res.log)
	}
	if labels := w.sw.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/done") {
		t.Errorf("the task issue's labels after the implementation: %v", labels)
	}
	if evidence := readFile(t, filepath.Join(w.outDir, "artifact-studio-run-evidence")); !strings.Contains(evidence, "/studio-runs/") {
		t.Errorf("the workflow's evidence upload found no run evidence of the implementation: %q", evidence)
	}
	pr = w.pull(pr.Number)
	if got, err := w.sw.Emu.ReadFile(sandbox.Owner, sandbox.Repo, pr.HeadSHA, "src/player/jump.gd"); err != nil || !strings.Contains(string(got), "-420.0") {
		t.Errorf("the pull request's head holds jump.gd %q (%v), want the real CLI's patch", got, err)
	}
	if conclusion := w.check(pr.HeadSHA, "studio/review").Conclusion; conclusion != "success" {
		t.Errorf("studio/review on the head: %q, want success", conclusion)
	}
	studioReview := false
	for _, rv := range w.sw.Emu.Reviews(sandbox.Owner, sandbox.Repo, pr.Number) {
		studioReview = studioReview || (rv.User == sandbox.BotLogin && rv.CommitID == pr.HeadSHA && strings.Contains(rv.Body, "The change is small and tested."))
	}
	if !studioReview {
		t.Errorf("the pull request has no studio review of its head: %+v", w.sw.Emu.Reviews(sandbox.Owner, sandbox.Repo, pr.Number))
	}
	gate := w.check(pr.HeadSHA, "studio/gate")
	mustHave(t, "studio/gate on the finished draft", gate.Summary, "Mark the pull request ready for review, then approve commit `"+pr.HeadSHA[:7]+"`")
	if gate.Conclusion != "action_required" {
		t.Errorf("studio/gate before the writer's approval: %q, want action_required", gate.Conclusion)
	}
	mustHave(t, "the status comment", w.statusComment(n), "[x] Verdict: **done**", "Mark it ready for review, then approve commit `"+pr.HeadSHA[:7]+"`")

	// As the gate says: ready for review, then an approval of the head; the gate passes.
	if err := w.sw.Emu.MarkReadyForReview(sandbox.Owner, sandbox.Repo, pr.Number); err != nil {
		t.Fatal(err)
	}
	requests := len(model.Requests())
	_, payload = w.approve(pr.Number)
	res, took = w.actOn("pull_request_review", payload)
	runs = append(runs, took)
	if res.err != nil {
		t.Fatalf("the head's approval: act %v\n%s", res.err, res.log)
	}
	if gate := w.check(pr.HeadSHA, "studio/gate"); gate.Conclusion != "success" {
		t.Fatalf("studio/gate after the writer's approval of the head: %q (%s)\n%s\n%s", gate.Conclusion, gate.Title, gate.Summary, res.log)
	}
	if got := len(model.Requests()); got != requests {
		t.Errorf("the approval of the head reached the model %d times: it must only pass the gate", got-requests)
	}

	// The writer merges.
	start = time.Now()
	mustHave(t, "the pull request", pr.Body, fmt.Sprintf("Closes #%d", n))
	merged := w.merge(pr.Number, pr.HeadSHA)
	if got, _ := w.sw.Emu.ReadFile(sandbox.Owner, sandbox.Repo, "main", "src/player/jump.gd"); !strings.Contains(string(got), "const JUMP_VELOCITY = -420.0") {
		t.Errorf("main's jump.gd after the merge: %q", got)
	}
	if got, _ := w.sw.Emu.ReadFile(sandbox.Owner, sandbox.Repo, "main", "tests/test_jump.gd"); string(got) != "extends Node\n# the jump is snappier\n" {
		t.Errorf("main's tests/test_jump.gd after the merge: %q", got)
	}
	if main, _ := w.sw.Emu.ResolveRef(sandbox.Owner, sandbox.Repo, "main"); main != merged {
		t.Errorf("main is %s, the merge made %s", main, merged)
	}
	if got, _ := w.sw.Emu.Issue(sandbox.Owner, sandbox.Repo, n); got.State != "closed" {
		t.Errorf("the task issue is %s after its pull request merged", got.State)
	}
	merging := time.Since(start)

	// What reached the model, and what the runner downloaded.
	if left := model.Remaining(); left != 0 {
		t.Errorf("%d scripted model turns were never asked for", left)
	}
	for _, r := range model.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+sandbox.OpenAIKey {
			t.Errorf("%s reached the model with Authorization %q, want the OPENAI_API_KEY secret", r.Path, got)
		}
	}
	if got := len(w.codex.Invocations()); got != 0 {
		t.Errorf("the fake Codex ran %d times: the real CLI must do the work", got)
	}
	prefix := "/" + actionRepo + "/releases/download/" + releaseTag + "/"
	if got, want := w.downloads(), []string{prefix + release.asset, prefix + "checksums.txt", prefix + "checksums.txt", prefix + release.asset}; !slices.Equal(got, want) {
		t.Errorf("downloads %v, want the CLI's two (step 1), then the runner's two, once (the tool cache serves the later events)", got)
	}

	var total time.Duration
	for _, d := range runs {
		total += d
	}
	t.Logf("from nothing to a merged pull request: %s of wall time; step 1 %s, step 2 %s, step 3 (the issue, `/studio run` and its act run) %s; "+
		"act runs %s (/studio run, the plan's approval, the head's approval: %s of runner time), the merge %s",
		time.Since(begin).Round(100*time.Millisecond), step1.Round(10*time.Millisecond), step2.Round(time.Millisecond), step3.Round(100*time.Millisecond),
		roundAll(runs), total.Round(100*time.Millisecond), merging.Round(time.Millisecond))
}

// newTeamWorld is a world whose repository holds a small game and nothing of the studio: no
// project file, no workflow. Its action is @v1, whose VERSION names the release the test built
// (the release workflow moves v1 only to a commit whose VERSION names its release).
func newTeamWorld(t *testing.T) *world {
	t.Helper()
	files := sandbox.DefaultFiles("")
	delete(files, ".codex/studio.json")
	// The fake Codex's control is started but nothing calls it: the real CLI runs.
	w := startWorld(t, "v1", files)
	if err := w.sw.Emu.AddToken(writerToken, sandbox.Writer); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.actionDir, "VERSION"), []byte(strings.TrimPrefix(releaseTag, "v")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// runTheWorkflowInitWrote makes act run the repository's .github/workflows/studio.yml, as init
// wrote and the team pushed it, with one line added under the action's inputs: openai-base-url,
// the scripted model server. The copy lies outside the workspace, which stays the repository's.
// The actions it uses besides the studio's come from stand-ins (testdata): act fetches nothing.
func (w *world) runTheWorkflowInitWrote(modelURL string) {
	t := w.t
	t.Helper()
	pushed, err := w.sw.Emu.ReadFile(sandbox.Owner, sandbox.Repo, "main", ".github/workflows/studio.yml")
	if err != nil {
		t.Fatal(err)
	}
	const key = "          openai-api-key: ${{ secrets.OPENAI_API_KEY }}\n"
	const uses = "        uses: " + actionRepo + "@v1\n"
	if strings.Count(string(pushed), key) != 1 || !strings.Contains(string(pushed), uses) {
		t.Fatalf("the workflow init wrote does not use %s@v1 with the OPENAI_API_KEY secret once:\n%s", actionRepo, pushed)
	}
	workflow := strings.Replace(string(pushed), key, key+"          openai-base-url: "+modelURL+" # test only: the scripted model server\n", 1)
	file := filepath.Join(w.base, "workflows", "studio.yml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(workflow), 0o644); err != nil {
		t.Fatal(err)
	}
	stand := filepath.Join(w.actionDir, "internal", "acttest", "testdata")
	w.actArgs = []string{"-W", file,
		"--local-repository", "actions/checkout@v4=" + filepath.Join(stand, "checkout"),
		"--local-repository", "actions/upload-artifact@v4=" + filepath.Join(stand, "upload-artifact")}
}

// actOn runs the workflow for one event and says how long act ran. The runner's workspace is
// first brought to the default branch, as GitHub runs an issue or review event's workflow from it.
func (w *world) actOn(event string, payload []byte) (actResult, time.Duration) {
	w.t.Helper()
	for _, args := range [][]string{{"fetch", "--quiet", "origin"}, {"checkout", "--quiet", "--force", "-B", "main", "origin/main"}} {
		if out, err := exec.Command("git", append([]string{"-C", w.sw.Workspace}, args...)...).CombinedOutput(); err != nil {
			w.t.Fatalf("bring the runner's workspace to main: git %s: %v\n%s", args, err, out)
		}
	}
	w.event = event
	start := time.Now()
	res := w.act(payload)
	return res, time.Since(start)
}

// approve submits the writer's approval of a pull request's head and returns the review and the
// pull_request_review event GitHub delivers.
func (w *world) approve(number int) (int64, []byte) {
	w.t.Helper()
	rv, err := w.sw.Emu.SubmitReview(sandbox.Owner, sandbox.Repo, number, sandbox.Writer, ghemu.ReviewSpec{Event: "APPROVE", Body: "Looks right."})
	if err != nil {
		w.t.Fatal(err)
	}
	payload, err := w.sw.Emu.WebhookPayload("pull_request_review", "submitted", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: number, ReviewID: rv.ID, Sender: sandbox.Writer})
	if err != nil {
		w.t.Fatal(err)
	}
	return rv.ID, payload
}

func (w *world) pull(number int) ghemu.Pull {
	w.t.Helper()
	pr, err := w.sw.Emu.Pull(sandbox.Owner, sandbox.Repo, number)
	if err != nil {
		w.t.Fatal(err)
	}
	return pr
}

// check is the latest check run named name on sha.
func (w *world) check(sha, name string) ghemu.CheckRun {
	var out ghemu.CheckRun
	for _, cr := range w.sw.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.HeadSHA == sha && cr.Name == name {
			out = cr
		}
	}
	return out
}

func (w *world) statusComment(number int) string {
	comments := w.botComments(number)
	if len(comments) != 1 {
		w.t.Fatalf("bot comments on #%d: %q, want one status comment", number, comments)
	}
	return comments[0]
}

// merge merges the pull request as the writer through the REST API, as the merge button does,
// and returns the merge commit.
func (w *world) merge(number int, head string) string {
	w.t.Helper()
	body, _ := json.Marshal(map[string]string{"sha": head, "merge_method": "merge"})
	req, err := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/api/v3/repos/%s/%s/pulls/%d/merge", w.server.URL, sandbox.Owner, sandbox.Repo, number), bytes.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+writerToken)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		SHA     string `json:"sha"`
		Merged  bool   `json:"merged"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || !out.Merged {
		w.t.Fatalf("merge #%d: HTTP %d %+v (%v)", number, resp.StatusCode, out, err)
	}
	return out.SHA
}

// teamMember is a writer's machine: a home with a git identity, and a clone of the repository
// that pushes with the writer's token.
type teamMember struct {
	t         *testing.T
	home      string
	dir       string
	env       []string
	serverURL string
}

func (w *world) teamMember() *teamMember {
	t := w.t
	t.Helper()
	m := &teamMember{t: t, home: filepath.Join(w.base, "team-home"), dir: filepath.Join(w.base, "team", sandbox.Repo), serverURL: w.server.URL}
	if err := os.MkdirAll(filepath.Join(m.home, ".local", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.home, ".gitconfig"), []byte("[user]\n\tname = Octo Cat\n\temail = octocat@example.invalid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.env = append(actEnv(os.Environ()), "HOME="+m.home, "PATH="+filepath.Join(m.home, ".local", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	remote := strings.Replace(w.sw.Emu.GitURL(sandbox.Owner, sandbox.Repo), "://", "://"+sandbox.Writer+":"+writerToken+"@", 1)
	if err := os.MkdirAll(filepath.Dir(m.dir), 0o755); err != nil {
		t.Fatal(err)
	}
	m.run(filepath.Dir(m.dir), "git", "clone", "--quiet", remote, m.dir)
	return m
}

// getTheCLI runs README's download block in a folder of its own: the release asset and
// checksums.txt from the emulated server, checked, installed in ~/.local/bin.
func (m *teamMember) getTheCLI(block []string) {
	m.t.Helper()
	script := strings.Join(block, "\n")
	for _, r := range []struct{ old, new string }{
		{"tag=v1.0.0", "tag=" + releaseTag}, {"asset=studio-linux-amd64", "asset=" + release.asset},
		{"https://github.com/", m.serverURL + "/"},
	} {
		if !strings.Contains(script, r.old) {
			m.t.Fatalf("README's download block no longer holds %q:\n%s", r.old, script)
		}
		script = strings.Replace(script, r.old, r.new, 1)
	}
	dir := filepath.Join(m.home, "download")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		m.t.Fatal(err)
	}
	if out := m.run(dir, "sh", "-ec", script); !strings.Contains(out, release.asset+": OK") || !strings.Contains(out, "studio "+releaseTag) {
		m.t.Fatalf("README's download block did not check and install the release:\n%s", out)
	}
}

// sh runs one of README's command lines in the clone.
func (m *teamMember) sh(line string) string {
	m.t.Helper()
	return m.run(m.dir, "sh", "-ec", line)
}

func (m *teamMember) git(args ...string) string {
	m.t.Helper()
	return strings.TrimSpace(m.run(m.dir, "git", args...))
}

func (m *teamMember) run(dir, name string, args ...string) string {
	m.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, m.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("%s %q in %s: %v\n%s", name, args, dir, err, out)
	}
	return string(out)
}

// files lists the clone's files, .git aside.
func (m *teamMember) files() []string {
	m.t.Helper()
	var out []string
	err := filepath.WalkDir(m.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(m.dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		m.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func (m *teamMember) newFiles(before []string) []string {
	var out []string
	for _, f := range m.files() {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	return out
}

// readmeSection is README's Quick start, up to the next section of its level.
func readmeSection(t *testing.T) string {
	t.Helper()
	readme := readFile(t, filepath.Join(root, "README.md"))
	_, rest, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal("README.md has no Quick start section")
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// readmeBlock is the ```sh block of README's Quick start that holds marker, one command line a
// line (indentation trimmed, blank lines dropped).
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	section := readmeSection(t)
	for {
		_, rest, ok := strings.Cut(section, "```sh\n")
		if !ok {
			t.Fatalf("README's Quick start has no sh block holding %q", marker)
		}
		block, after, _ := strings.Cut(rest, "```")
		section = after
		if !strings.Contains(block, marker) {
			continue
		}
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		return lines
	}
}

// fillTaskForm is an issue opened from an issue form with values by field id, as GitHub writes
// it: a `### <label>` section a field, _No response_ for one left empty, and the form's labels.
func fillTaskForm(t *testing.T, form string, values map[string]string) (title, body string, labels []string) {
	t.Helper()
	var f struct {
		Name   string   `yaml:"name"`
		Labels []string `yaml:"labels"`
		Body   []struct {
			Type       string `yaml:"type"`
			ID         string `yaml:"id"`
			Attributes struct {
				Label   string   `yaml:"label"`
				Options []string `yaml:"options"`
			} `yaml:"attributes"`
		} `yaml:"body"`
	}
	if err := yaml.Unmarshal([]byte(form), &f); err != nil {
		t.Fatalf("the issue form init wrote: %v", err)
	}
	if f.Name != "Studio task" {
		t.Errorf("the issue form is %q, README calls it the Studio task form", f.Name)
	}
	var sections []string
	used := 0
	for _, field := range f.Body {
		v, ok := values[field.ID]
		if ok {
			used++
		}
		if field.Type == "dropdown" && ok && !slices.Contains(field.Attributes.Options, v) {
			t.Fatalf("the form's %s offers no %q: %q", field.ID, v, field.Attributes.Options)
		}
		if v == "" {
			v = "_No response_"
		}
		sections = append(sections, "### "+field.Attributes.Label+"\n\n"+v)
	}
	if used != len(values) {
		t.Fatalf("the form has fields %+v, not all of %v", f.Body, values)
	}
	return "Make the jump snappier", strings.Join(sections, "\n\n"), f.Labels
}

// studioStatus is the action's status output in an act log (the workflow init writes records no
// outputs of its own).
func studioStatus(log string) string {
	status := ""
	for _, line := range strings.Split(log, "\n") {
		if _, v, ok := strings.Cut(line, "::set-output:: status="); ok {
			status = strings.TrimSpace(v)
		}
	}
	return status
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mustHave(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

func roundAll(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.Round(100*time.Millisecond).String())
	}
	return strings.Join(s, ", ")
}
