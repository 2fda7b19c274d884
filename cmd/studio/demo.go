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
)

const demoTaskBody = "The jump feels floaty. Make it snappier and add a regression test.\n\n" +
	"```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nfiles: [design/gdd.md]\n```\n"

// demoScript is what the scripted agent does: two in-scope edits and one out-of-scope edit, so the
// demo shows the scope check at work.
var demoScript = fakecodex.Script{Calls: []fakecodex.Call{{
	Edits: []fakecodex.Edit{
		{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\nconst COYOTE_TIME = 0.1\n"},
		{Write: "tests/test_jump.gd", Content: "extends Node\n\nfunc test_jump_velocity():\n\tassert(JUMP_VELOCITY < -400.0)\n"},
		{Write: "README.md", Content: "# Hop\n\nNow with snappy jumps!\n"},
	},
	FinalMessage: "Raised the jump velocity, added coyote time and a regression test.",
}}}

// runDemo plays the whole `/studio run` story offline: the GitHub emulator, a bare git remote
// served by git http-backend, a workspace cloned like actions/checkout, and a scripted agent.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keep := fs.String("dir", "", "keep the demo's files (remote, workspace, evidence) in this directory")
	useReal := fs.Bool("real-codex", false, "run the genuine Codex CLI (needs OPENAI_API_KEY) instead of the scripted agent")
	codexPath := fs.String("codex-path", "", "the Codex CLI for --real-codex (default $CODEX_BIN, then codex on PATH)")
	baseURL := fs.String("openai-base-url", "", "model API base URL for --real-codex (default the OpenAI API)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	key := getenv("OPENAI_API_KEY")
	if *useReal && key == "" {
		fmt.Fprintln(stderr, "demo: --real-codex needs an API key: export OPENAI_API_KEY=... (it goes to the studio's local proxy only, never to the agent)")
		return exitUsage
	}
	w, err := sandbox.New(sandbox.Options{Dir: *keep})
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
	defer w.Close()

	issue, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "Make the jump snappier", Body: demoTaskBody})
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
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
	extra := map[string]string{}
	over := actionOverrides{codex: &fakecodex.Runner{Script: demoScript}}
	if *useReal {
		extra["INPUT_OPENAI-API-KEY"] = key
		extra["INPUT_CODEX-PATH"] = *codexPath
		extra["INPUT_OPENAI-BASE-URL"] = *baseURL
		extra["CODEX_BIN"] = getenv("CODEX_BIN")
		over = actionOverrides{}
	}
	env, err := w.Env("issue_comment", payload, extra)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitError
	}
	agent := "a scripted agent"
	if *useReal {
		agent = "the real Codex CLI"
	}
	fmt.Fprintf(stdout, "== Codex Studio demo (%s): @%s comments `/studio run` on %s/%s#%d\n\n", agent, sandbox.Writer, sandbox.Owner, sandbox.Repo, issue.Number)
	var actionLog bytes.Buffer
	code := runActionWith(ctx, func(k string) string { return env[k] }, &actionLog, &actionLog, over)
	if code != exitOK {
		fmt.Fprintf(stderr, "demo: the action failed (exit %d):\n%s", code, actionLog.String())
		return exitError
	}
	printDemo(stdout, w, issue.Number)
	if !*useReal {
		fmt.Fprintln(stdout, "\nThe verdict is blocked on purpose: the scripted agent also rewrote README.md, which the task's\nwriteFiles do not list, so that change stayed off the branch and is reported as a blocker.")
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
		fmt.Fprintf(out, "== Pull request #%d: %s\n   %s -> %s, head %s, by @%s\n\n%s\n", pr.Number, pr.Title, pr.Head, pr.Base, shortRev(pr.HeadSHA), pr.Author, indent(pr.Body))
		for _, rv := range w.Emu.Reviews(sandbox.Owner, sandbox.Repo, pr.Number) {
			fmt.Fprintf(out, "-- review by @%s on %s: %s\n%s\n", rv.User, shortRev(rv.CommitID), rv.State, indent(rv.Body))
		}
		for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
			if cr.HeadSHA == pr.HeadSHA {
				fmt.Fprintf(out, "-- check run %s on %s: %s\n", cr.Name, shortRev(cr.HeadSHA), cr.Conclusion)
			}
		}
		fmt.Fprintln(out)
		if stat, err := exec.Command("git", "--git-dir", filepath.Join(w.Dir, "remote", sandbox.Owner, sandbox.Repo+".git"), "show", "--stat", "--format=commit %H%nAuthor: %an <%ae>%n%n%B", pr.HeadSHA).CombinedOutput(); err == nil {
			fmt.Fprintf(out, "== The commit on %s\n%s\n", pr.Head, indent(string(stat)))
		} else if files, err := w.Emu.ChangedFiles(sandbox.Owner, sandbox.Repo, pr.HeadSHA); err == nil {
			fmt.Fprintf(out, "== Files of the commit on %s\n%s\n", pr.Head, indent(strings.Join(files, "\n")))
		}
	}
	if summary, err := w.Summary(); err == nil && summary != "" {
		fmt.Fprintf(out, "== Job summary\n%s\n", indent(summary))
	}
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
