package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/proposal"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy"
)

// The local lifecycle: `studio run <role> <objective>` without --print-prompt or --dry-run runs the
// action's own bot on the local checkout. The task becomes a task issue held by hub.LocalGitHub,
// which prints what would go to GitHub; the workspace is a gitops.Repo whose "remote" is the
// checkout's own repository, so the in-scope work is committed on a local branch
// (studio/local/task-<N>) and nothing is pushed anywhere else. Codex, verification, review, fix
// passes and scope enforcement are the action's code, unchanged.

// localBranchPrefix keeps local task branches apart from the action's.
const localBranchPrefix = "studio/local/"

// runLocalLifecycle is the local lifecycle (localLifecycle) that `studio run` is built with.
func runLocalLifecycle(ctx context.Context, lr LocalRun, stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "studio run: "+format+"\n", args...)
		return exitError
	}
	base, err := localGit(ctx, lr.Root, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil || base == "" {
		return fail("%s has no branch checked out (a detached HEAD?); check out the branch the task starts from", lr.Root)
	}
	// The run checks out the branch it works on and cleans the work tree, as the action does on
	// the runner: refuse rather than lose uncommitted work.
	dirty, err := localGit(ctx, lr.Root, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return fail("%v", err)
	}
	if dirty != "" {
		n := len(strings.Split(dirty, "\n"))
		return fail("the checkout has %d uncommitted or untracked %s; commit or stash them first: the run checks out its task branch and would otherwise remove them. Nothing was changed.", n, plural(n, "path", "paths"))
	}

	task := policy.Task{Role: lr.Role, WriteFiles: lr.WriteFiles, Files: lr.Artifacts, ApprovalScope: lr.ApprovalScope}
	if len(lr.Verify) > 0 {
		task.Verify = &policy.Verification{Command: lr.Verify[0], Args: lr.Verify[1:]}
	}
	// As in the seed, the local lifecycle reviews only with --review and fixes only with --fix.
	review, passes := lr.Review, 0
	if lr.Fix {
		passes = lr.MaxFixPasses
	}
	task.RunPolicy.Review, task.RunPolicy.MaxFixPasses = &review, &passes
	block, err := proposal.TaskBlock(task)
	if err != nil {
		return fail("%v", err)
	}
	number := lr.IssueNumber
	if number == 0 {
		number = 1
	}
	title := lr.Objective
	if lr.IssueNumber > 0 {
		title = fmt.Sprintf("Issue #%d", lr.IssueNumber)
	}
	issue := hub.Issue{Number: number, Title: title, Body: lr.Objective + "\n\n" + block + "\n"}

	const botLogin, user = "studio-local[bot]", "local"
	stateDir, err := os.MkdirTemp("", "studio-local-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(stateDir)
	repo := &gitops.Repo{Dir: lr.Root, RemoteURL: lr.Root, StateDir: filepath.Join(stateDir, "git")}

	if strings.TrimSpace(os.Getenv("OPENAI_API_KEY")) == "" {
		return fail("Codex needs a model API key: export OPENAI_API_KEY=... (it goes to the studio's local proxy only, never to the agent). Nothing was changed.")
	}
	home := os.Getenv("STUDIO_CODEX_HOME")
	// The action's codex-engine input, as STUDIO_CODEX_ENGINE: app-server unless it says exec.
	engine, err := codex.ParseEngine(os.Getenv("STUDIO_CODEX_ENGINE"))
	if err != nil {
		return fail("STUDIO_CODEX_ENGINE: %v. Nothing was changed.", err)
	}
	rt, err := codex.Start(ctx, codex.Config{
		Bin: os.Getenv("CODEX_BIN"), OpenAIKey: os.Getenv("OPENAI_API_KEY"), Upstream: os.Getenv("OPENAI_BASE_URL"),
		CodexHome: home, Getenv: os.Getenv, Engine: engine,
	})
	if err != nil {
		return fail("%v", err)
	}
	defer rt.Close()

	// Compiled profile guidance lives for this run only (the action's goes under RUNNER_TEMP).
	guidanceDir, err := os.MkdirTemp("", "studio-guidance-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(guidanceDir)

	// The seed's run id (YYYYMMDDHHmmssSSS-<pid>-<n>, docs/runtime.md); the action uses GITHUB_RUN_ID.
	runID := codex.RunID(time.Now(), os.Getpid(), 1)
	runsDir := filepath.Join(os.TempDir(), "studio-runs")
	// One writer for the terminal: the bot's log and what the stand-in for GitHub prints go
	// through the same pipe, in order.
	log := newLocalLog(stdout)
	defer log.Close()
	gh := hub.NewLocalGitHub(log, user, botLogin, lr.Root, base, issue)
	gh.Unprinted = status.IsStatusComment // its verdict is printed once, at the end
	b := bot.New(bot.Deps{GitHub: gh, Workspace: repo, Codex: rt.CLI, Redactor: rt.Redactor, Log: log}, bot.Settings{
		BotLogin: botLogin, BranchPrefix: localBranchPrefix, RunID: runID, WorkDir: lr.Root, RunsDir: runsDir, GuidanceDir: guidanceDir,
		CodexTimeout: 30 * time.Minute, ModelTier: lr.ModelTier, ConstrainedSandbox: lr.ConstrainedSandbox,
		// `studio approve` is the local approval: the bot counts it as the plan review it stands for.
		LocalApproval: func(hash string) (string, time.Time, bool) {
			rec, ok, err := localApprovalFor(ctx, lr.Root, hash)
			return rec.ApprovedBy, rec.ApprovedAt, ok && err == nil
		},
		Containment: func() string {
			return "Local run: Codex runs as you, unconfined (the action confines it on the runner)."
		},
	})
	line := "/studio run"
	if lr.ApprovedByUser {
		line += " --approved-by-user"
	}
	out, herr := b.Handle(ctx, bot.Trigger{
		Kind: bot.TriggerComment, Owner: "local", Repo: filepath.Base(lr.Root), DefaultBranch: base,
		Issue: number, Actor: bot.Actor{Login: user, Type: "User"}, CommentID: 1, CommentBody: line, Snapshot: issue,
	})
	log.Close()
	// Give the checkout back as it was: the work is on the task branch.
	restoreErr := repo.CheckoutBase(context.WithoutCancel(ctx), base)
	if restoreErr != nil {
		fmt.Fprintf(stderr, "studio run: could not put %s back on %s: %v\n", lr.Root, base, restoreErr)
	}
	if herr != nil {
		return fail("%v", herr)
	}
	if out.Status == "awaiting-approval" {
		// The bot's summary names the plan pull request it would have opened on GitHub; locally
		// there is none, and the approval is `studio approve`.
		if plan := strings.TrimSpace(out.Said); plan != "" {
			// On GitHub the plan is the pull request's body; locally this is the only place a
			// person can read what they are asked to approve.
			fmt.Fprintf(stdout, "\nThe plan (Codex's read-only pass):\n\n%s", indent(plan))
		}
		fmt.Fprintf(stdout, "\n%s\n", localAwaitingApproval(lr))
	} else {
		fmt.Fprintf(stdout, "\n%s\n", strings.TrimSpace(out.Summary))
	}
	if ev := filepath.Join(runsDir, runID+"-"+lr.Role); dirExists(ev) {
		fmt.Fprintf(stdout, "\nEvidence: %s\n", ev)
	}
	// Only a branch that exists in the checkout is worth switching to, whatever the outcome names.
	branch := out.Branch
	if branch != "" {
		if _, err := localGit(context.WithoutCancel(ctx), lr.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
			branch = ""
		}
	}
	switch {
	case out.Status == "refused":
	case branch != "":
		fmt.Fprintf(stdout, "\nBranch: %s (local; nothing was pushed). %s\n", branch, localCheckoutState(lr.Root, base, branch, restoreErr))
	case out.Status != "done":
		fmt.Fprintln(stdout, "\nNothing was committed, so no branch was made.")
	}
	if branch == "" && restoreErr != nil {
		fmt.Fprintf(stdout, "\n%s\n", localCheckoutState(lr.Root, base, "", restoreErr))
	}
	fmt.Fprintf(stdout, "Status: %s\n", out.Status)
	if out.Status != "done" {
		return exitError
	}
	return exitOK
}

// localCheckoutState says where the run left the checkout: back on the base, or, when putting it
// back failed, plainly not, and how to get there (the run started from a clean checkout, so
// nothing of the user's is in the way: what it finds there is the run's own).
func localCheckoutState(root, base, branch string, restoreErr error) string {
	if restoreErr == nil {
		if branch == "" {
			return ""
		}
		return fmt.Sprintf("The checkout is back on %s: `git switch %s` to look at the work.", base, branch)
	}
	where := "The run's work is on no branch."
	if branch != "" {
		where = fmt.Sprintf("The committed work is safe on %s.", branch)
	}
	return fmt.Sprintf("The checkout is NOT back on %s: its files may be the run's, not %s's (see the error above). %s The run started from a clean checkout, so to restore it: `git -C %s checkout -f %s && git -C %s clean -fd`.",
		base, base, where, shellWord(root), shellWord(base), shellWord(root))
}

func localGit(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// standInPullLine matches the bot's log lines about the stand-in's pull request, which a local run
// does not open: the gate's line (the stand-in printed the check already, without a pull request
// number that exists nowhere), and the plan record a rerun cannot find on it (the previous run's
// stand-in held it; locally `studio approve` is the approval, which the run reports itself).
var standInPullLine = regexp.MustCompile("^(studio/gate on [0-9a-f]+ \\(#\\d+\\): |pull request #\\d+: plan commit `[0-9a-f]+` has no `studio/plan` check run|pull request #\\d+ has no plan commit)")

// localLog prints the bot's log for a terminal: the lifecycle's lines as they are, Actions
// workflow commands turned into plain words.
type localLog struct {
	pw   *io.PipeWriter
	done chan struct{}
}

func newLocalLog(w io.Writer) *localLog {
	pr, pw := io.Pipe()
	l := &localLog{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			ln := sc.Text()
			switch {
			case strings.HasPrefix(ln, "::group::"), strings.HasPrefix(ln, "::endgroup::"):
				continue
			case standInPullLine.MatchString(ln):
				continue
			case strings.HasPrefix(ln, "::warning::"):
				ln = "warning: " + strings.TrimPrefix(ln, "::warning::")
			case strings.HasPrefix(ln, "::error::"):
				ln = "error: " + strings.TrimPrefix(ln, "::error::")
			}
			fmt.Fprintln(w, ln)
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return l
}

func (l *localLog) Write(p []byte) (int, error) { return l.pw.Write(p) }

// Close flushes what was written; it may be called more than once.
func (l *localLog) Close() error {
	l.pw.Close()
	<-l.done
	return nil
}

// localAwaitingApproval is a local run's answer when the studio mode needs an approval first: what
// happened, and the command that approves exactly this task.
func localAwaitingApproval(lr LocalRun) string {
	mode := lr.Eligibility.Input.StudioMode
	project := policy.StudioConfig{Mode: lr.Eligibility.Input.ProjectStage, StudioMode: mode}
	o := runFlags{writeFiles: lr.WriteFiles, artifacts: lr.Artifacts, scopes: lr.ApprovalScope}
	hash, _, _ := localObjectiveHash(lr.Role, lr.Objective, o, project)
	cmd := []string{"studio", "approve", lr.Role, shellWord(lr.Objective)}
	for _, w := range lr.WriteFiles {
		cmd = append(cmd, "--write-file", shellWord(w))
	}
	for _, s := range lr.ApprovalScope {
		cmd = append(cmd, "--approval-scope", shellWord(s))
	}
	cmd = append(cmd, "--project", shellWord(lr.Root))
	return fmt.Sprintf("**Awaiting approval** (%s): the plan pass ran read-only and nothing was implemented. On GitHub a writer would approve the plan pull request; a local run opens none. Approve this task (objective hash %s), then run the same command again:\n\n  %s",
		mode, orDefault(hash, "unavailable"), strings.Join(cmd, " "))
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
