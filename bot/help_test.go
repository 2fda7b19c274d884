package bot

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
)

// helpGitHub records replies; every call help must not make (a permission check, a reaction, a
// status comment edit, a label, the lock's refs) panics through fakeGitHub's nil interface.
type helpGitHub struct {
	*fakeGitHub
	replies map[int][]string
}

func (h *helpGitHub) CreateComment(_ context.Context, n int, body string) (hub.Comment, error) {
	h.replies[n] = append(h.replies[n], body)
	id := int64(1000 + len(h.comments[n]))
	h.comments[n] = append(h.comments[n], hub.Comment{ID: id, Body: body, Author: "github-actions[bot]"})
	return hub.Comment{ID: id, Body: body}, nil
}

// `/studio help` from someone without write permission, on an issue and on any pull request, is
// answered with one reply listing every verb of the table, its flags, where it works and what it
// does; nothing else is asked or written, and a re-delivered event is not answered twice.
func TestHelpAnswersAnyoneWithTheVerbTable(t *testing.T) {
	t.Parallel()
	for _, isPull := range []bool{false, true} {
		gh := &helpGitHub{fakeGitHub: &fakeGitHub{comments: map[int][]hub.Comment{}, perms: map[string]string{"visitor": "read"}}, replies: map[int][]string{}}
		var log bytes.Buffer
		b := testBot(gh, &log)
		tr := Trigger{Kind: TriggerComment, Owner: "acme", Repo: "hop", Issue: 9, IsPull: isPull, Actor: Actor{Login: "visitor", Type: "User"},
			CommentID: 77, CommentBody: "How does this work?\n/studio help", Snapshot: hub.Issue{Number: 9, IsPull: isPull}}
		out, err := b.cfg.Handle(context.Background(), tr)
		if err != nil || out.Status != "done" {
			t.Fatalf("pull %v: Handle = %+v, %v\n%s", isPull, out, err, log.String())
		}
		if len(gh.replies[9]) != 1 {
			t.Fatalf("pull %v: replies = %v, want one", isPull, gh.replies)
		}
		reply := gh.replies[9][0]
		for _, want := range []string{
			"> /studio help\n\n@visitor, ",
			"- `/studio run [--approved-by-user] [--dry-run] [--fresh]` (on a task issue): runs Codex",
			"- `/studio task create --role <role> <title> [--file <path>]",
			"- `/studio accept` (on an issue without a task block): appends the task block the studio last proposed",
			"- `/studio revoke` (on a task issue or its studio pull request): withdraws",
			"- `/studio review` (on a studio pull request): reviews",
			"- `/studio help` (on any issue or pull request): lists these commands",
			"`run`, `workflow`, `task`, `accept`, `orchestrate`, `revoke`, `review`, `steer`, `pause`, `continue` and `stop` need write, maintain or admin permission",
			helpMarker(77),
		} {
			if !strings.Contains(reply, want) {
				t.Errorf("pull %v: reply lacks %q:\n%s", isPull, want, reply)
			}
		}
		if len(gh.asked) != 0 {
			t.Errorf("pull %v: help asked for permissions of %v", isPull, gh.asked)
		}
		// The same comment delivered again is not answered again.
		out, err = b.cfg.Handle(context.Background(), tr)
		if err != nil || out.Status != "skipped" || len(gh.replies[9]) != 1 {
			t.Errorf("pull %v: re-delivered help = %+v, %v, %d replies", isPull, out, err, len(gh.replies[9]))
		}
	}
}

// Help with stray words is still answered, with the problem first; a bot not in allowed-bots is
// still ignored; the trigger phrase is the configured one.
func TestHelpEdges(t *testing.T) {
	t.Parallel()
	gh := &helpGitHub{fakeGitHub: &fakeGitHub{comments: map[int][]hub.Comment{}}, replies: map[int][]string{}}
	b := New(Deps{GitHub: gh, Log: &bytes.Buffer{}}, Settings{TriggerPhrase: "/bot"})
	tr := Trigger{Kind: TriggerComment, Issue: 3, Actor: Actor{Login: "alice", Type: "User"}, CommentID: 5, CommentBody: "/bot help run"}
	if _, err := b.Handle(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	if r := gh.replies[3]; len(r) != 1 || !strings.Contains(r[0], "@alice, `/bot help` does not take the argument `run`. The commands") || !strings.Contains(r[0], "- `/bot run [--approved-by-user] [--dry-run] [--fresh]`") {
		t.Errorf("replies = %q", r)
	}
	tr = Trigger{Kind: TriggerComment, Issue: 4, Actor: Actor{Login: "renovate[bot]", Type: "Bot"}, CommentID: 6, CommentBody: "/bot help"}
	if out, err := b.Handle(context.Background(), tr); err != nil || out.Status != "skipped" || len(gh.replies[4]) != 0 {
		t.Errorf("a bot's help = %+v, %v, replies %q", out, err, gh.replies[4])
	}
}
