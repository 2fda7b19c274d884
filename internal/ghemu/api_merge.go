package ghemu

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Merging a pull request (PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge, operation
// pulls/merge) and marking a draft ready for review. The merge is a real commit on the base
// branch of the bare repository: a merge commit (merge_method merge, the default) or one commit
// with the merged tree (squash). Rebase merges are refused as a repository that does not allow
// them refuses them. The operation is not in the trimmed OpenAPI description (testdata); its
// answers follow GitHub's documented ones (200 pull-request-merge-result, 405 when the pull
// request cannot be merged, 409 when `sha` is not the head, 422 for a bad merge_method) and are
// checked through go-github in merge_test.go.

// MergeSpec is the merge button's choices: MergeMethod merge (default), squash or rebase; SHA,
// when set, must be the pull request's head; CommitTitle and CommitMessage replace GitHub's
// default title and add the message below it.
type MergeSpec struct {
	MergeMethod, SHA, CommitTitle, CommitMessage string
}

// MergePull merges pull request number as merger, with the same checks as the REST API, and
// returns the commit the base branch now points at.
func (s *Server) MergePull(owner, name string, number int, merger string, spec MergeSpec) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return "", err
	}
	u, ok := s.users[strings.ToLower(merger)]
	if !ok {
		return "", fmt.Errorf("ghemu: merge: unknown user %q", merger)
	}
	is, ok := r.issues[number]
	if !ok || is.pull == nil {
		return "", fmt.Errorf("ghemu: merge: no pull request #%d", number)
	}
	sha, err := s.mergePull(r, is, u, spec)
	if err != nil {
		return "", fmt.Errorf("ghemu: merge #%d: %w", number, err)
	}
	return sha, nil
}

// MarkReadyForReview takes a pull request out of draft. GitHub does it with the GraphQL mutation
// markPullRequestReadyForReview (or the button); REST has no way, and the emulator no GraphQL.
func (s *Server) MarkReadyForReview(owner, name string, number int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return err
	}
	is, ok := r.issues[number]
	if !ok || is.pull == nil {
		return fmt.Errorf("ghemu: ready for review: no pull request #%d", number)
	}
	if is.state != "open" {
		return fmt.Errorf("ghemu: ready for review: pull request #%d is %s", number, is.state)
	}
	is.pull.draft = false
	is.updated = s.now()
	return nil
}

func (s *Server) mergePull(r *repo, is *issue, u *user, spec MergeSpec) (string, error) {
	if is.state != "open" || is.pull.merged {
		return "", errStatus(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	if is.pull.draft {
		return "", errStatus(http.StatusMethodNotAllowed, "Pull Request is still a draft")
	}
	method := spec.MergeMethod
	switch method {
	case "":
		method = "merge"
	case "merge", "squash":
	case "rebase":
		return "", errStatus(http.StatusMethodNotAllowed, "Rebase merges are not allowed on this repository.")
	default:
		return "", errValidation("PullRequest", "merge_method", "invalid", "")
	}
	head, base := s.headSHA(r, is), s.baseSHA(r, is)
	if head == "" || base == "" {
		return "", errStatus(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	if spec.SHA != "" && !strings.EqualFold(spec.SHA, head) {
		return "", errStatus(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	// The merged tree, as the merge button computes it; a conflict leaves the pull request open.
	tree, err := s.runGit(r.gitDir, nil, nil, "merge-tree", "--write-tree", "--no-messages", base, head)
	if err != nil {
		return "", errStatus(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	n := strconv.Itoa(is.number)
	title, parents := spec.CommitTitle, []string{base, head}
	message := spec.CommitMessage
	switch method {
	case "merge":
		if title == "" {
			title = "Merge pull request #" + n + " from " + r.owner.Login + "/" + is.pull.head
		}
		if message == "" {
			message = is.title
		}
	case "squash":
		parents = parents[:1]
		if title == "" {
			title = is.title + " (#" + n + ")"
		}
		if message == "" {
			// GitHub's default squash message lists the pull request's commits.
			subjects, err := s.runGit(r.gitDir, nil, nil, "log", "--reverse", "--format=* %s", base+".."+head)
			if err != nil {
				return "", err
			}
			message = subjects
		}
	}
	full := title
	if message != "" {
		full += "\n\n" + message
	}
	now := s.now()
	date := strconv.FormatInt(now.Unix(), 10) + " +0000"
	email := fmt.Sprintf("%d+%s@users.noreply.github.com", u.ID, u.Login)
	env := []string{"GIT_AUTHOR_NAME=" + u.Login, "GIT_AUTHOR_EMAIL=" + email, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com", "GIT_COMMITTER_DATE=" + date}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	sha, err := s.runGit(r.gitDir, env, []byte(full), append(args, "-F", "-")...)
	if err != nil {
		return "", err
	}
	// Atomic against a push to the base meanwhile, as GitHub's merge is.
	if _, err := s.runGit(r.gitDir, nil, nil, "update-ref", "refs/heads/"+is.pull.base, sha, base); err != nil {
		return "", errStatus(http.StatusConflict, "Base branch was modified. Review and try the merge again.")
	}
	is.pull.merged, is.pull.mergedBy, is.pull.mergeSHA = true, u, sha
	is.state, is.closedAt, is.updated = "closed", now, now
	if is.pull.base == r.defaultBranch {
		s.closeLinkedIssues(r, is, now)
	}
	return sha, nil
}

// closingRef is GitHub's closing keywords before an issue of the same repository: "Closes #12",
// "fixes: acme/hop#12".
var closingRef = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+(?:([\w.-]+/[\w.-]+))?#(\d+)\b`)

// closeLinkedIssues closes the open issues a pull request merged into the default branch names
// with a closing keyword in its body, as GitHub does.
func (s *Server) closeLinkedIssues(r *repo, pr *issue, now time.Time) {
	for _, m := range closingRef.FindAllStringSubmatch(pr.body, -1) {
		if m[1] != "" && !strings.EqualFold(m[1], r.fullName()) {
			continue // another repository's issue: not emulated
		}
		n, _ := strconv.Atoi(m[2])
		is, ok := r.issues[n]
		if !ok || is.pull != nil || is.state != "open" {
			continue
		}
		is.state, is.closedAt, is.updated = "closed", now, now
	}
}

func mergePullHandler(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	var req struct {
		CommitTitle   string `json:"commit_title"`
		CommitMessage string `json:"commit_message"`
		SHA           string `json:"sha"`
		MergeMethod   string `json:"merge_method"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	sha, err := c.s.mergePull(c.repo, is, c.user, MergeSpec{MergeMethod: req.MergeMethod, SHA: req.SHA, CommitTitle: req.CommitTitle, CommitMessage: req.CommitMessage})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, obj{"sha": sha, "merged": true, "message": "Pull Request successfully merged"}, nil
}
