package ghemu

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// Git blobs and trees (REST "Git database" API): POST /git/blobs, GET /git/blobs/{sha} and
// POST /git/trees. The studio keeps an agent's thread as a blob in a one-file tree under a ref
// of its own (bot/threads), so the emulator writes real objects into the bare repository, as
// GitHub does. Their shapes follow GitHub's documented `git-blob`, `short-blob` and `git-tree`
// schemas (not in the trimmed OpenAPI description) and are checked through go-github in
// gitobjects_test.go. Trees are flat here: the studio writes one file at the top.

func createGitBlob(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Content == nil {
		return 0, nil, errValidation("Blob", "content", "missing_field", "")
	}
	data := []byte(*req.Content)
	switch req.Encoding {
	case "", "utf-8":
	case "base64":
		raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(*req.Content, "\n", ""))
		if err != nil {
			return 0, nil, errUnprocessable("Problems parsing JSON: content is not valid Base64")
		}
		data = raw
	default:
		return 0, nil, errValidation("Blob", "encoding", "invalid", "encoding must be utf-8 or base64")
	}
	sha, err := c.s.runGit(c.repo.gitDir, nil, data, "hash-object", "-w", "--stdin")
	if err != nil {
		return 0, nil, err
	}
	url := c.s.repoAPI(c.repo) + "/git/blobs/" + sha
	c.w.Header().Set("Location", url)
	return http.StatusCreated, obj{"sha": sha, "url": url}, nil
}

func getGitBlob(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	sha := c.params["sha"]
	if !fullSHA.MatchString(sha) {
		return 0, nil, errNotFound()
	}
	if typ, err := c.s.objectType(c.repo.gitDir, sha); err != nil || typ != "blob" {
		return 0, nil, errNotFound()
	}
	data, err := c.s.runGitRaw(c.repo.gitDir, nil, nil, "cat-file", "blob", sha)
	if err != nil {
		return 0, nil, err
	}
	if strings.Contains(c.r.Header.Get("Accept"), "raw") {
		return http.StatusOK, rawBody(data), nil
	}
	// GitHub wraps the Base64 at 60 characters a line.
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	b.WriteString(enc + "\n")
	return http.StatusOK, obj{
		"sha": sha, "size": len(data), "url": c.s.repoAPI(c.repo) + "/git/blobs/" + sha,
		"content": b.String(), "encoding": "base64",
	}, nil
}

func createGitTree(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path    string  `json:"path"`
			Mode    string  `json:"mode"`
			Type    string  `json:"type"`
			SHA     *string `json:"sha"`
			Content *string `json:"content"`
		} `json:"tree"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Tree == nil {
		return 0, nil, errValidation("Tree", "tree", "missing_field", "")
	}
	if req.BaseTree != "" {
		return 0, nil, errUnprocessable("base_tree is not supported by the emulator")
	}
	var lines []string
	var entries []obj
	for _, e := range req.Tree {
		if e.Path == "" || strings.Contains(e.Path, "/") || e.Mode != "100644" || e.Type != "blob" {
			return 0, nil, errUnprocessable("GitRPC::BadObjectState")
		}
		var sha string
		switch {
		case e.SHA != nil && e.Content == nil:
			if typ, err := c.s.objectType(c.repo.gitDir, *e.SHA); err != nil || typ != "blob" {
				return 0, nil, errUnprocessable("tree.sha " + *e.SHA + " is not a valid blob")
			}
			sha = *e.SHA
		case e.Content != nil && e.SHA == nil:
			out, err := c.s.runGit(c.repo.gitDir, nil, []byte(*e.Content), "hash-object", "-w", "--stdin")
			if err != nil {
				return 0, nil, err
			}
			sha = out
		default:
			return 0, nil, errUnprocessable("Must supply either tree.sha or tree.content")
		}
		lines = append(lines, e.Mode+" blob "+sha+"\t"+e.Path)
		entries = append(entries, obj{"path": e.Path, "mode": e.Mode, "type": "blob", "sha": sha, "url": c.s.repoAPI(c.repo) + "/git/blobs/" + sha})
	}
	tree, err := c.s.runGit(c.repo.gitDir, nil, []byte(strings.Join(lines, "\n")+"\n"), "mktree")
	if err != nil {
		return 0, nil, errUnprocessable("GitRPC::BadObjectState")
	}
	url := c.s.repoAPI(c.repo) + "/git/trees/" + tree
	c.w.Header().Set("Location", url)
	return http.StatusCreated, obj{"sha": tree, "url": url, "tree": entries, "truncated": false}, nil
}

// rawBody is an answer in the raw media type: the bytes, not JSON.
type rawBody []byte
