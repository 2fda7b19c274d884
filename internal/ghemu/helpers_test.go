package ghemu_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// Fixture accounts: alice owns the repository, bob writes, tina triages, rita reads, eve is a
// stranger, and the bot writes through its own token.
const (
	owner    = "alice"
	repoName = "game"
	botLogin = "studio-bot[bot]"
)

var tokens = map[string]string{
	"alice": "tok-alice", "bob": "tok-bob", "tina": "tok-tina", "rita": "tok-rita", "eve": "tok-eve", botLogin: "tok-bot",
}

// studioWorkflow is the fixture repository's dispatchable workflow.
const studioWorkflow = `name: Studio
on:
  issue_comment:
    types: [created]
  workflow_dispatch:
    inputs:
      task:
        description: Issue number
        required: true
      mode:
        type: choice
        options: [plan, build]
        default: build
      dry_run:
        type: boolean
jobs: {}
`

// fixedClock advances one second per reading, so timestamps are distinct and reproducible.
func fixedClock() func() time.Time {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

func newServer(t testing.TB, opts ghemu.Options) *ghemu.Server {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedClock()
	}
	s, err := ghemu.New(opts)
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close emulator: %v", err)
		}
	})
	for _, login := range []string{"alice", "bob", "tina", "rita", "eve"} {
		s.AddUser(login)
	}
	s.AddBot(botLogin)
	for login, tok := range tokens {
		if err := s.AddToken(tok, login); err != nil {
			t.Fatal(err)
		}
	}
	err = s.CreateRepo(ghemu.RepoSpec{Owner: owner, Name: repoName, Files: map[string]string{
		"README.md":          "# game\n",
		"src/player/jump.gd": "extends Node\n\nfunc jump():\n\tpass\n",
		"docs/old.md":        "old\n",
		// The bot's workflow, dispatchable with a "task" input, and one that is not dispatchable.
		".github/workflows/studio.yml": studioWorkflow,
		".github/workflows/ci.yml":     "name: CI\non: [push, pull_request]\njobs: {}\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	for login, role := range map[string]ghemu.Role{"bob": ghemu.RoleWrite, "tina": ghemu.RoleTriage, "rita": ghemu.RoleRead, botLogin: ghemu.RoleWrite} {
		if err := s.SetRole(owner, repoName, login, role); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// client returns a go-github client for login ("" for anonymous) against the emulator.
func client(t testing.TB, s *ghemu.Server, login string, rt http.RoundTripper) *github.Client {
	t.Helper()
	hc := &http.Client{Transport: rt}
	c := github.NewClient(hc)
	if login != "" {
		c = c.WithAuthToken(tokens[login])
	}
	c, err := c.WithEnterpriseURLs(s.APIURL(), s.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// branchWithChange pushes a commit on a new branch (through the seeding API) and returns its SHA.
func branchWithChange(t testing.TB, s *ghemu.Server, branch string, files map[string]string, del ...string) string {
	t.Helper()
	sha, err := s.CommitFiles(owner, repoName, branch, ghemu.CommitSpec{Message: "change " + branch, Files: files, Delete: del})
	if err != nil {
		t.Fatal(err)
	}
	return sha
}
