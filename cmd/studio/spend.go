package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/ledger"
	"github.com/codex-studio/studio-action/policy/spend"
)

// `studio spend` prints a month of the spend ledger (refs/studio/spend/<yyyy-mm>) per day, per
// role and per issue, read from a checkout with git or from GitHub's API.

const spendLong = `Prints the spend ledger of one month: each run's cost as the action appended it to
refs/studio/spend/<yyyy-mm>, summed per day, per role and per issue. Runs that used a model with no
price known are counted apart: their tokens are known, their cost is not.

By default it reads the checkout in --project (default the current directory) with git, fetching the
month's ref from origin first (refs/studio/spend/* are not fetched by a plain clone); --no-fetch
reads what the checkout already has. --api reads through GitHub's API instead: GITHUB_TOKEN (or
GH_TOKEN), GITHUB_REPOSITORY (or --repo owner/name) and GITHUB_API_URL.`

type spendFlags struct {
	month, project, repo string
	api, noFetch         bool
}

func newSpendCmd(e env) *cobra.Command {
	var f spendFlags
	cmd := &cobra.Command{
		Use:   "spend",
		Short: "print the spend ledger per day, role and issue (from a checkout or the API)",
		Long:  spendLong,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runSpend(c.Context(), e, f, time.Now())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.month, "month", "", "the month, yyyy-mm (default this month, UTC)")
	fs.StringVar(&f.project, "project", ".", "the checkout to read with git")
	fs.BoolVar(&f.noFetch, "no-fetch", false, "read the checkout's refs without fetching the ledger from origin")
	fs.BoolVar(&f.api, "api", false, "read through GitHub's API instead of a checkout")
	fs.StringVar(&f.repo, "repo", "", "owner/name for --api (default $GITHUB_REPOSITORY)")
	return cmd
}

func runSpend(ctx context.Context, e env, f spendFlags, now time.Time) error {
	month := now.UTC()
	if f.month != "" {
		m, err := time.Parse("2006-01", f.month)
		if err != nil {
			return usagef("--month takes yyyy-mm, e.g. 2026-12 (got %q)", f.month)
		}
		month = m
	}
	var reader ledger.CommitReader
	if f.api {
		gh, err := githubFromEnv(e, f.repo, "to read the ledger", "read contents")
		if err != nil {
			return err
		}
		reader = gh
	} else {
		g := gitLedger{dir: f.project}
		if !f.noFetch {
			if err := g.fetch(ctx, spend.Ref(month)); err != nil {
				fmt.Fprintf(e.stderr, "note: could not fetch the ledger from origin (%v); showing what the checkout has\n", err)
			}
		}
		reader = g
	}
	recs, err := ledger.Read(ctx, reader, month)
	if err != nil {
		return failf("%s", hub.Explain(err))
	}
	if len(recs) == 0 {
		fmt.Fprintf(e.stdout, "No spend recorded for %s (%s has no runs).\n", month.Format("2006-01"), spend.Ref(month))
		return nil
	}
	fmt.Fprint(e.stdout, spend.Render(month.Format("2006-01"), spend.Summarize(recs)))
	return nil
}

// gitLedger reads the ledger from a checkout's refs with git.
type gitLedger struct{ dir string }

func (g gitLedger) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", g.dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// fetch brings the month's ledger ref from origin; a month with no ref yet is not an error.
func (g gitLedger) fetch(ctx context.Context, ref string) error {
	// ls-remote --exit-code exits 2 when origin answered and has no such ref; anything else
	// (no origin, no network, no access) is an error the caller reports.
	out, err := exec.CommandContext(ctx, "git", "-C", g.dir, "ls-remote", "--exit-code", "origin", ref).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		return nil // origin has no ledger for the month
	case err != nil:
		return fmt.Errorf("git ls-remote origin %s: %s", ref, strings.TrimSpace(string(out)))
	}
	_, err = g.git(ctx, "fetch", "--quiet", "--no-tags", "origin", "+"+ref+":"+ref)
	return err
}

func (g gitLedger) LockRecord(ctx context.Context, ref string) (string, string, error) {
	sha, err := g.git(ctx, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", "", hub.ErrNotFound
	}
	sha = strings.TrimSpace(sha)
	msg, _, err := g.CommitRecord(ctx, sha)
	return sha, msg, err
}

func (g gitLedger) CommitRecord(ctx context.Context, sha string) (string, []string, error) {
	msg, err := g.git(ctx, "log", "-1", "--format=%B", sha)
	if err != nil {
		return "", nil, err
	}
	line, err := g.git(ctx, "rev-list", "--parents", "-n", "1", sha)
	if err != nil {
		return "", nil, err
	}
	fields := strings.Fields(line)
	if len(fields) > 0 {
		fields = fields[1:]
	}
	return strings.TrimRight(msg, "\n") + "\n", fields, nil
}
