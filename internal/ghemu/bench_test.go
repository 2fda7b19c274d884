package ghemu_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

// The studio bot's run against the emulator makes a dozen REST calls; these benchmarks time the
// ones whose handlers read the bare repository, through the HTTP server as the bot calls them.
// Run them with: go test ./internal/ghemu/ -run '^$' -bench . -benchtime 200x

// benchCall makes one API request as the bot and decodes a JSON object answer.
func benchCall(b *testing.B, s *ghemu.Server, method, path, body string, want int) map[string]any {
	b.Helper()
	status, _, raw := request(b, s, method, path, tokens[botLogin], strings.NewReader(body))
	if status != want {
		b.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func benchHead(b *testing.B, s *ghemu.Server) (commit, tree string) {
	b.Helper()
	ref := benchCall(b, s, "GET", "/repos/alice/game/git/ref/heads/main", "", 200)
	commit = ref["object"].(map[string]any)["sha"].(string)
	c := benchCall(b, s, "GET", "/repos/alice/game/git/commits/"+commit, "", 200)
	return commit, c["tree"].(map[string]any)["sha"].(string)
}

// BenchmarkCreateGitCommit is the bot's lock record: POST /git/commits with a tree and a parent.
func BenchmarkCreateGitCommit(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	parent, tree := benchHead(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := fmt.Sprintf(`{"message":"studio lock %d\n","tree":%q,"parents":[%q]}`, i, tree, parent)
		c := benchCall(b, s, "POST", "/repos/alice/game/git/commits", body, http.StatusCreated)
		if c["sha"] == nil {
			b.Fatal("no sha")
		}
	}
}

// BenchmarkGetGitCommit reads a commit back: GET /git/commits/{sha}.
func BenchmarkGetGitCommit(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	head, _ := benchHead(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchCall(b, s, "GET", "/repos/alice/game/git/commits/"+head, "", 200)
	}
}

// BenchmarkCreateGitRef takes a ref lock: POST /git/refs.
func BenchmarkCreateGitRef(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	head, _ := benchHead(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := fmt.Sprintf(`{"ref":"refs/studio/locks/bench-%d","sha":%q}`, i, head)
		benchCall(b, s, "POST", "/repos/alice/game/git/refs", body, http.StatusCreated)
	}
}

// BenchmarkCreatePull opens a pull request from a branch one commit ahead of main: POST /pulls.
func BenchmarkCreatePull(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		branch := fmt.Sprintf("studio/bench-%d", i)
		branchWithChange(b, s, branch, map[string]string{"src/player/jump.gd": fmt.Sprintf("extends Node\n# %d\n", i)})
		b.StartTimer()
		body := fmt.Sprintf(`{"title":"bench %d","head":%q,"base":"main"}`, i, branch)
		benchCall(b, s, "POST", "/repos/alice/game/pulls", body, http.StatusCreated)
	}
}

// BenchmarkListPullCommits lists a pull request's commits: GET /pulls/{n}/commits.
func BenchmarkListPullCommits(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	branchWithChange(b, s, "studio/bench", map[string]string{"src/player/jump.gd": "extends Node\n# 1\n"})
	branchWithChange(b, s, "studio/bench", map[string]string{"src/player/jump.gd": "extends Node\n# 2\n"})
	pr := benchCall(b, s, "POST", "/repos/alice/game/pulls", `{"title":"bench","head":"studio/bench","base":"main"}`, http.StatusCreated)
	path := fmt.Sprintf("/repos/alice/game/pulls/%v/commits", pr["number"])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchCall(b, s, "GET", path, "", 200)
	}
}

// BenchmarkGetRef reads one ref, as the bot's lock and branch checks do: GET /git/ref/{ref}.
func BenchmarkGetRef(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchCall(b, s, "GET", "/repos/alice/game/git/ref/heads/main", "", 200)
	}
}

// BenchmarkGetContents reads a file at the default branch: GET /contents/{path}.
func BenchmarkGetContents(b *testing.B) {
	s := newServer(b, ghemu.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchCall(b, s, "GET", "/repos/alice/game/contents/src/player/jump.gd", "", 200)
	}
}
