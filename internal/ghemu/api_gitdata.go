package ghemu

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Git commit objects (REST "Git database" API): GET /git/commits/{sha} and POST /git/commits.
// The bot's ref locks record who holds them in the message of a commit made through the API, so
// the emulator makes real commits in the bare repository with git commit-tree, as GitHub does.
// These two operations are not in the trimmed OpenAPI description (testdata); their shape
// follows GitHub's documented `git-commit` schema and is checked through go-github in
// gitdata_test.go.

// gitIdent is a commit's author or committer as the API shows it.
type gitIdent struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

func getGitCommit(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	sha := c.params["sha"]
	if !fullSHA.MatchString(sha) {
		return 0, nil, errNotFound()
	}
	if typ, err := c.s.objectType(c.repo.gitDir, sha); err != nil || typ != "commit" {
		return 0, nil, errNotFound()
	}
	out, err := c.s.gitCommitJSON(c.repo, sha)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

func createGitCommit(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		Message   *string   `json:"message"`
		Tree      string    `json:"tree"`
		Parents   []string  `json:"parents"`
		Author    *gitIdent `json:"author"`
		Committer *gitIdent `json:"committer"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Message == nil {
		return 0, nil, errValidation("Commit", "message", "missing_field", "")
	}
	if !fullSHA.MatchString(req.Tree) {
		return 0, nil, errUnprocessable("Tree SHA does not exist")
	}
	if typ, err := c.s.objectType(c.repo.gitDir, req.Tree); err != nil || typ != "tree" {
		return 0, nil, errUnprocessable("Tree SHA does not exist")
	}
	args := []string{"commit-tree", req.Tree}
	for _, p := range req.Parents {
		if !c.validCommit(p) {
			return 0, nil, errUnprocessable("Parent SHA does not exist or is not a commit object")
		}
		args = append(args, "-p", p)
	}
	// GitHub defaults both identities to the authenticated user, dated now.
	now := c.s.now()
	def := gitIdent{Name: c.user.Login, Email: fmt.Sprintf("%d+%s@users.noreply.github.com", c.user.ID, c.user.Login), Date: now.Format(time.RFC3339)}
	author, committer := def, def
	if req.Author != nil {
		author = fill(*req.Author, def)
	}
	if req.Committer != nil {
		committer = fill(*req.Committer, def)
	} else if req.Author != nil {
		committer = author
	}
	ad, err := gitDate(author.Date)
	if err != nil {
		return 0, nil, errValidation("Commit", "author", "invalid", "")
	}
	cd, err := gitDate(committer.Date)
	if err != nil {
		return 0, nil, errValidation("Commit", "committer", "invalid", "")
	}
	env := []string{"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email, "GIT_AUTHOR_DATE=" + ad,
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email, "GIT_COMMITTER_DATE=" + cd}
	// The message goes on stdin, byte for byte (commit-tree -m would add nothing, but -F - keeps
	// messages that start with a dash safe).
	sha, err := c.s.runGit(c.repo.gitDir, env, []byte(*req.Message), append(args, "-F", "-")...)
	if err != nil {
		return 0, nil, errUnprocessable("Commit could not be created")
	}
	out, err := c.s.gitCommitJSON(c.repo, sha)
	if err != nil {
		return 0, nil, err
	}
	c.w.Header().Set("Location", c.s.repoAPI(c.repo)+"/git/commits/"+sha)
	return http.StatusCreated, out, nil
}

func fill(id, def gitIdent) gitIdent {
	if id.Name == "" {
		id.Name = def.Name
	}
	if id.Email == "" {
		id.Email = def.Email
	}
	if id.Date == "" {
		id.Date = def.Date
	}
	return id
}

// gitDate turns an ISO 8601 timestamp into git's "<unix> <zone>" form.
func gitDate(s string) (string, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(t.Unix(), 10) + " " + t.Format("-0700"), nil
}

// gitCommitJSON renders a commit object as GET /git/commits/{sha} answers.
func (s *Server) gitCommitJSON(r *repo, sha string) (obj, error) {
	f, ok := s.showCommitFast(r.gitDir, sha)
	if !ok {
		// %x00-separated fields, then the raw message after the last separator.
		raw, err := s.runGit(r.gitDir, nil, nil, "show", "-s", "--format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
		if err != nil {
			return nil, errNotFound()
		}
		if f = strings.SplitN(raw, "\x00", 9); len(f) != 9 {
			return nil, fmt.Errorf("ghemu: unexpected commit format for %s", sha)
		}
	}
	api := s.repoAPI(r)
	parents := []any{}
	for _, p := range strings.Fields(f[1]) {
		parents = append(parents, obj{"sha": p, "url": api + "/git/commits/" + p, "html_url": s.repoHTML(r) + "/commit/" + p})
	}
	ident := func(name, email, date string) obj {
		t, _ := time.Parse(time.RFC3339, date)
		return obj{"name": name, "email": email, "date": t.UTC().Format(time.RFC3339)}
	}
	// runGit trims the newlines git show adds after %B.
	msg := f[8]
	return obj{
		"sha": sha, "node_id": nodeID("C", int64(len(sha))) + sha[:7], "url": api + "/git/commits/" + sha,
		"html_url": s.repoHTML(r) + "/commit/" + sha,
		"author":   ident(f[2], f[3], f[4]), "committer": ident(f[5], f[6], f[7]),
		"message":      msg,
		"tree":         obj{"sha": f[0], "url": api + "/git/trees/" + f[0]},
		"parents":      parents,
		"verification": obj{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil},
	}, nil
}
