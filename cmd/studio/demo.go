package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

const demoTaskBody = "The jump feels floaty. Make it snappier and add a regression test.\n\n" +
	"```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nfiles: [design/gdd.md]\n```\n"

// demoPlan is the scripted agent's plan, in the modes that plan before they write.
const demoPlan = "1. Raise JUMP_VELOCITY in src/player/jump.gd and add a short coyote time.\n2. Add tests/test_jump.gd, a regression test for the jump velocity."

// demoImplementation is what the scripted agent does once it may write: two in-scope edits and one
// out-of-scope edit, so the demo shows the scope check at work.
var demoImplementation = fakecodex.Call{
	Edits: []fakecodex.Edit{
		{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\nconst COYOTE_TIME = 0.1\n"},
		{Write: "tests/test_jump.gd", Content: "extends Node\n\nfunc test_jump_velocity():\n\tassert(JUMP_VELOCITY < -400.0)\n"},
		{Write: "README.md", Content: "# Hop\n\nNow with snappy jumps!\n"},
	},
	FinalMessage: "Raised the jump velocity, added coyote time and a regression test.",
}

// demoApprover approves the plan in strict-studio, where the requester may not.
const demoApprover = "hubot"

// runDemo plays a new team's first task offline: the GitHub emulator, a bare git remote served by
// git http-backend, a workspace cloned like actions/checkout, and a scripted agent. It runs in
// the studio mode `studio init` writes unless told otherwise, so the demo shows the first run the
// team will see: in guided-studio a draft plan pull request, its approval, then the implementation.
const demoAbout = `Plays a first task offline, as studio init sets a repository up: an issue, /studio run, in
guided-studio the draft plan pull request and its approval, the implementation, the review and
the gate, on the embedded GitHub emulator with a scripted agent (--real-codex: the real Codex CLI
and OPENAI_API_KEY). It prints what a team would see. Its files are deleted on exit unless --dir
keeps them.`

// runDemo is `studio demo`: it builds a whole studio on the embedded emulator (a repository, a
// remote over loopback, a task) and walks one task from comment to gate, printing what a team
// would see. Its length is the walk's: each step is a line or two the reader follows in order.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio demo", flag.ContinueOnError)
	keep := fs.String("dir", "", "keep the demo's files (remote, workspace, evidence) in this directory")
	useReal := fs.Bool("real-codex", false, "run the genuine Codex CLI (needs OPENAI_API_KEY) instead of the scripted agent")
	codexPath := fs.String("codex-path", "", "the Codex CLI for --real-codex (default $CODEX_BIN, then codex on PATH)")
	baseURL := fs.String("openai-base-url", "", "model API base URL for --real-codex (default the OpenAI API)")
	modeFlag := fs.String("studio-mode", string(initStudioMode), "the project's studioMode: fast-prototype, guided-studio (studio init's default) or strict-studio")
	if ok, code := parseFlags(fs, args, "studio demo [--studio-mode M] [--dir D] [--real-codex]", demoAbout, stdout, stderr); !ok {
		return code
	}
	mode := policy.StudioMode(*modeFlag)
	if !policy.ValidMode(mode) {
		fmt.Fprintf(stderr, "demo: --studio-mode must be fast-prototype, guided-studio or strict-studio, not %q\n", *modeFlag)
		return exitUsage
	}
	key := getenv("OPENAI_API_KEY")
	if *useReal && key == "" {
		fmt.Fprintln(stderr, "demo: --real-codex needs an API key: export OPENAI_API_KEY=... (it goes to the studio's local proxy only, never to the agent)")
		return exitUsage
	}
	w, err := sandbox.New(sandbox.Options{Dir: *keep, Files: sandbox.DefaultFiles(string(mode))})
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
	defer w.Close()
	d := &demo{w: w, stdout: stdout, stderr: stderr, extra: map[string]string{}}
	plans := mode != policy.ModeFastPrototype
	script := fakecodex.Script{Calls: []fakecodex.Call{demoImplementation}}
	if plans {
		script.Calls = []fakecodex.Call{{FinalMessage: demoPlan}, demoImplementation}
	}
	// One runner for both events: the script's calls go on where the plan left off.
	d.over = actionOverrides{codex: &fakecodex.Runner{Script: script}}
	if *useReal {
		d.extra["INPUT_OPENAI-API-KEY"] = key
		d.extra["INPUT_CODEX-PATH"] = *codexPath
		d.extra["INPUT_OPENAI-BASE-URL"] = *baseURL
		d.extra["CODEX_BIN"] = getenv("CODEX_BIN")
		d.over = actionOverrides{}
	}
	approver := sandbox.Writer
	if mode == policy.ModeStrictStudio {
		approver = demoApprover
		w.Emu.AddUser(approver)
		if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, approver, ghemu.RoleWrite); err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return exitError
		}
	}

	issue, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "Make the jump snappier", Body: demoTaskBody})
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
	agent := "a scripted agent"
	if *useReal {
		agent = "the real Codex CLI"
	}
	how := ""
	if mode == initStudioMode {
		how = ", as `studio init` sets up"
	}
	fmt.Fprintf(stdout, "== Codex Studio demo (%s; studioMode %s%s)\n\n", agent, mode, how)

	fmt.Fprintf(stdout, "== 1. @%s comments `/studio run` on %s/%s#%d\n\n", sandbox.Writer, sandbox.Owner, sandbox.Repo, issue.Number)
	commentID, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, issue.Number, sandbox.Writer, "/studio run")
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
	payload, err := w.Emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, issue.Number, commentID, sandbox.Writer)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
	if code := d.action("issue_comment", payload); code != exitOK {
		return code
	}
	if plans {
		outputs, _ := w.Outputs()
		pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
		if outputs["status"] != "awaiting-approval" || len(pulls) != 1 {
			fmt.Fprintf(stderr, "demo: the plan step ended %q, not with a plan pull request to approve\n", outputs["status"])
			printDemo(stdout, w, issue.Number)
			return exitError
		}
		pr := pulls[0]
		printPull(stdout, w, pr, false)
		printOutputs(stdout, w)

		fmt.Fprintf(stdout, "\n== 2. @%s approves pull request #%d: the implementation runs on %s\n\n", approver, pr.Number, pr.Head)
		rv, err := w.Emu.SubmitReview(sandbox.Owner, sandbox.Repo, pr.Number, approver, ghemu.ReviewSpec{Event: "APPROVE", Body: "The plan is right; go ahead."})
		if err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return exitError
		}
		payload, err := w.Emu.WebhookPayload("pull_request_review", "submitted", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: pr.Number, ReviewID: rv.ID, Sender: approver})
		if err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return exitError
		}
		if code := d.action("pull_request_review", payload); code != exitOK {
			return code
		}
	}
	printDemo(stdout, w, issue.Number)
	if !*useReal {
		fmt.Fprintln(stdout, "\nThe verdict is blocked on purpose: the scripted agent also rewrote README.md, which the task's\nwriteFiles do not list, so that change stayed off the branch and is reported as a blocker.")
	}
	if plans {
		fmt.Fprintln(stdout, "`studio demo --studio-mode fast-prototype` shows the mode that implements at once, without a plan.")
	} else {
		fmt.Fprintf(stdout, "`studio demo` shows %s, the mode `studio init` writes: an approved plan comes first.\n", initStudioMode)
	}
	// The status comment names a run evidence folder inside the demo's folder: say whether it
	// outlives the demo.
	if *keep != "" {
		fmt.Fprintf(stdout, "\nThe demo's files (the remote, the workspace and the run evidence named above) are kept in %s.\n", *keep)
	} else {
		fmt.Fprintln(stdout, "\nThe demo's files (the remote, the workspace and the run evidence named above) are deleted when the demo ends; `studio demo --dir DIR` keeps them.")
	}
	fmt.Fprintf(stdout, "\nNow set up your own repository: in its checkout run\n  %s\nthen add the OPENAI_API_KEY secret and comment `/studio run` on an issue (README, Quick start).\n",
		`studio init --name "My Game" --engine godot --mode prototype`)
	return exitOK
}

// demo is one demo's world and how its action runs are made.
type demo struct {
	w              *sandbox.World
	stdout, stderr io.Writer
	extra          map[string]string
	over           actionOverrides
}

// action runs the action on one event, as the workflow would; its log is shown only on failure.
func (d *demo) action(event string, payload []byte) int {
	env, err := d.w.Env(event, payload, d.extra)
	if err != nil {
		fmt.Fprintf(d.stderr, "demo: %v\n", err)
		return exitError
	}
	var actionLog bytes.Buffer
	if code := runActionWith(context.Background(), func(k string) string { return env[k] }, &actionLog, &actionLog, d.over); code != exitOK {
		fmt.Fprintf(d.stderr, "demo: the action failed on %s (exit %d):\n%s", event, code, actionLog.String())
		return exitError
	}
	return exitOK
}

func printDemo(out io.Writer, w *sandbox.World, number int) {
	is, _ := w.Emu.Issue(sandbox.Owner, sandbox.Repo, number)
	fmt.Fprintf(out, "== Issue #%d: %s  [labels: %s]\n\n", is.Number, is.Title, strings.Join(is.Labels, ", "))
	fmt.Fprintln(out, indent(is.Body))
	for _, c := range w.Emu.Comments(sandbox.Owner, sandbox.Repo, number) {
		var reacts []string
		for _, r := range w.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, c.ID) {
			reacts = append(reacts, r.Content+" by "+r.User)
		}
		fmt.Fprintf(out, "-- comment by @%s", c.Author)
		if len(reacts) > 0 {
			fmt.Fprintf(out, " (reactions: %s)", strings.Join(reacts, ", "))
		}
		fmt.Fprintf(out, "\n%s\n", indent(c.Body))
	}
	for _, pr := range w.Emu.Pulls(sandbox.Owner, sandbox.Repo) {
		printPull(out, w, pr, true)
		if stat, err := exec.Command("git", "--git-dir", filepath.Join(w.Dir, "remote", sandbox.Owner, sandbox.Repo+".git"), "show", "--stat", "--format=commit %H%nAuthor: %an <%ae>%n%n%B", pr.HeadSHA).CombinedOutput(); err == nil {
			fmt.Fprintf(out, "== The commit on %s\n%s\n", pr.Head, indent(string(stat)))
		} else if files, err := w.Emu.ChangedFiles(sandbox.Owner, sandbox.Repo, pr.HeadSHA); err == nil {
			fmt.Fprintf(out, "== Files of the commit on %s\n%s\n", pr.Head, indent(strings.Join(files, "\n")))
		}
	}
	if summary, err := w.Summary(); err == nil && summary != "" {
		fmt.Fprintf(out, "== Job summary\n%s\n", indent(summary))
	}
	printOutputs(out, w)
}

// printPull shows a pull request as GitHub would: title, branches, body and, with reviews, its
// reviews and the check runs on its head.
func printPull(out io.Writer, w *sandbox.World, pr ghemu.Pull, reviews bool) {
	draft := ""
	if pr.Draft {
		draft = " (draft)"
	}
	fmt.Fprintf(out, "== Pull request #%d%s: %s\n   %s -> %s, head %s, by @%s\n\n%s\n", pr.Number, draft, pr.Title, pr.Head, pr.Base, shortRev(pr.HeadSHA), pr.Author, indent(pr.Body))
	if !reviews {
		return
	}
	for _, rv := range w.Emu.Reviews(sandbox.Owner, sandbox.Repo, pr.Number) {
		fmt.Fprintf(out, "-- review by @%s on %s: %s\n%s\n", rv.User, shortRev(rv.CommitID), rv.State, indent(rv.Body))
	}
	for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.HeadSHA == pr.HeadSHA {
			fmt.Fprintf(out, "-- check run %s on %s: %s\n", cr.Name, shortRev(cr.HeadSHA), cr.Conclusion)
		}
	}
	fmt.Fprintln(out)
}

func printOutputs(out io.Writer, w *sandbox.World) {
	if outputs, err := w.Outputs(); err == nil {
		fmt.Fprintf(out, "== Step outputs: status=%s branch=%s pull-request=%s run-id=%s\n", outputs["status"], outputs["branch"], outputs["pull-request"], outputs["run-id"])
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "   " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func shortRev(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
