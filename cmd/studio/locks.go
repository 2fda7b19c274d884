package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
)

// `studio locks` lists what orchestrations hold on a repository: task claims, concurrency slots
// and write locks, with their records (task, run, expiry) and whether each has expired.

func newLocksCmd(e env) *cobra.Command {
	var repo string
	cmd := &cobra.Command{
		Use:   "locks",
		Short: "list the orchestration locks, slots and task claims of a repository (needs a token)",
		Long: `Lists refs/studio/tasks/*, refs/studio/slots/* and refs/studio/locks/* of a repository with the
record each holds: the task, the run, and when it expires. An expired lock is broken, with a note, by
the next orchestration that needs it. Reads GITHUB_TOKEN (or GH_TOKEN), GITHUB_REPOSITORY (or
--repo owner/name) and GITHUB_API_URL (default https://api.github.com; a GitHub Enterprise Server
URL works).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			client, err := githubFromEnv(e, repo, "to read the refs", "read contents")
			if err != nil {
				return err
			}
			return listLocks(c.Context(), client, e, time.Now())
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "owner/name (default $GITHUB_REPOSITORY)")
	return cmd
}

// githubFromEnv builds the GitHub client a local command uses: GITHUB_TOKEN (or GH_TOKEN), the
// repository from --repo or GITHUB_REPOSITORY, GITHUB_API_URL (default https://api.github.com; a
// GitHub Enterprise Server URL works). purpose and may say what the token is for, in the error.
func githubFromEnv(e env, repo, purpose, may string) (*hub.Client, error) {
	if repo == "" {
		repo = e.getenv("GITHUB_REPOSITORY")
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, usagef("the repository must be owner/name: give --repo or set GITHUB_REPOSITORY (got %q)", repo)
	}
	token := localToken(e.getenv)
	if token == "" {
		return nil, failf("a GitHub token is needed %s: set GITHUB_TOKEN (or GH_TOKEN) to a token that may %s in %s/%s", purpose, may, owner, name)
	}
	c, err := hub.NewClient(githubHTTP(e.stderr), localAPIURL(e.getenv), token, owner, name)
	if err != nil {
		return nil, failf("%v", err)
	}
	return c, nil
}

// localToken is the token a local command reads GitHub with: GITHUB_TOKEN, else GH_TOKEN.
func localToken(getenv func(string) string) string {
	if t := getenv("GITHUB_TOKEN"); t != "" {
		return t
	}
	return getenv("GH_TOKEN")
}

// localAPIURL is GITHUB_API_URL without its trailing slash, https://api.github.com by default.
func localAPIURL(getenv func(string) string) string {
	return strings.TrimSuffix(orDefault(getenv("GITHUB_API_URL"), "https://api.github.com"), "/")
}

func listLocks(ctx context.Context, client *hub.Client, e env, now time.Time) error {
	rows := 0
	for _, kind := range []struct{ prefix, title string }{
		{"refs/studio/tasks/", "task claims"},
		{"refs/studio/slots/", "concurrency slots"},
		{"refs/studio/locks/", "write locks"},
	} {
		refs, err := client.MatchingRefs(ctx, kind.prefix)
		if err != nil {
			return failf("%v", err)
		}
		sort.Slice(refs, func(i, j int) bool { return refs[i].Ref < refs[j].Ref })
		for _, r := range refs {
			if kind.prefix == "refs/studio/locks/" && !policy.IsWriteLockRef(r.Ref) {
				continue // a run's per-issue lock, not an orchestration's
			}
			_, msg, err := client.LockRecord(ctx, r.Ref)
			if errors.Is(err, hub.ErrNotFound) {
				continue
			}
			if err != nil {
				return failf("%v", err)
			}
			if rows == 0 {
				fmt.Fprintf(e.stdout, "%-40s %-24s %-6s %-12s %-20s %s\n", "REF", "KEY", "TASK", "RUN", "EXPIRES", "STATE")
			}
			rows++
			rec, ok := policy.ParseLockRecord(msg)
			if !ok {
				fmt.Fprintf(e.stdout, "%-40s %-24s %-6s %-12s %-20s %s\n", r.Ref, "?", "?", "?", "?", "unreadable (the next orchestration that needs it breaks it)")
				continue
			}
			state := "held"
			if rec.TaskRun != "" {
				// The run that gives the ref back: once GitHub reports it completed, the next
				// orchestration that needs the ref breaks it.
				state = "held by task run " + rec.TaskRun
			}
			if rec.Expired(now) {
				state = "expired (the next orchestration that needs it breaks it)"
			}
			fmt.Fprintf(e.stdout, "%-40s %-24s #%-5d %-12s %-20s %s\n", r.Ref, rec.Key, rec.Task, rec.Run, rec.Expires.UTC().Format(time.RFC3339), state)
		}
	}
	if rows == 0 {
		fmt.Fprintln(e.stdout, "no orchestration holds anything")
	}
	return nil
}
