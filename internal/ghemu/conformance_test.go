package ghemu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/go-github/v60/github"
)

// validatingTransport checks every response against GitHub's OpenAPI description and records
// which operations were exercised. Responses to operations the description does not contain
// (GET /repos/{owner}/{repo}, /user, contents) are counted separately.
type validatingTransport struct {
	t      *testing.T
	routes []describedRoute

	mu         sync.Mutex
	covered    map[string][]int // operationId -> statuses seen
	undescribe []string
}

// descriptions are the parts of GitHub's description in testdata: the shared trimmed file and
// the workflow-run operations cut from the same upstream file (testdata/README.md).
var descriptions = []string{"testdata/api.github.com.trimmed.json", "testdata/api.github.com.actions-runs.json"}

func newValidatingTransport(t *testing.T, s *ghemu.Server) *validatingTransport {
	t.Helper()
	var routes []describedRoute
	for _, file := range descriptions {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromFile(file)
		if err != nil {
			t.Fatalf("load OpenAPI description: %v", err)
		}
		// The description's server is https://api.github.com; the emulator serves the same paths
		// under /api/v3 as GitHub Enterprise Server does.
		doc.Servers = openapi3.Servers{{URL: s.URL() + "/api/v3"}}
		// GitHub's own examples are not all valid date-times; they are documentation, not responses.
		if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
			t.Fatalf("OpenAPI description %s: %v", file, err)
		}
		routes = append(routes, describedRoutes(doc)...)
	}
	// Prefer the most specific template when several match, across both files.
	sort.SliceStable(routes, func(i, j int) bool { return routes[i].static > routes[j].static })
	return &validatingTransport{t: t, routes: routes, covered: map[string][]int{}}
}

// describedRoute matches request paths to an operation. kin-openapi's routers take a path
// parameter to be one segment, but GitHub's {ref} and label {name} span slashes
// ("heads/main", "studio:status/done"), so those two parameters match greedily here.
type describedRoute struct {
	re     *regexp.Regexp
	names  []string
	route  *routers.Route
	static int
}

var paramRE = regexp.MustCompile(`\{([^}]+)\}`)

func describedRoutes(doc *openapi3.T) []describedRoute {
	var out []describedRoute
	for path, item := range doc.Paths.Map() {
		var names []string
		var pattern strings.Builder
		last := 0
		for _, loc := range paramRE.FindAllStringSubmatchIndex(path, -1) {
			pattern.WriteString(regexp.QuoteMeta(path[last:loc[0]]))
			name := path[loc[2]:loc[3]]
			names = append(names, name)
			if name == "ref" || name == "name" {
				pattern.WriteString("(.+)")
			} else {
				pattern.WriteString("([^/]+)")
			}
			last = loc[1]
		}
		pattern.WriteString(regexp.QuoteMeta(path[last:]))
		re := regexp.MustCompile("^/api/v3" + pattern.String() + "$")
		static := len(paramRE.ReplaceAllString(path, ""))
		for method, op := range item.Operations() {
			out = append(out, describedRoute{re: re, names: names, static: static,
				route: &routers.Route{Spec: doc, Server: doc.Servers[0], Path: path, PathItem: item, Method: method, Operation: op}})
		}
	}
	// Prefer the most specific template when several match.
	sort.Slice(out, func(i, j int) bool { return out[i].static > out[j].static })
	return out
}

func (v *validatingTransport) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	for _, r := range v.routes {
		if r.route.Method != req.Method {
			continue
		}
		m := r.re.FindStringSubmatch(req.URL.EscapedPath())
		if m == nil {
			continue
		}
		params := map[string]string{}
		for i, name := range r.names {
			val, err := url.PathUnescape(m[i+1])
			if err != nil {
				return nil, nil, fmt.Errorf("unescape %s: %w", name, err)
			}
			params[name] = val
		}
		return r.route, params, nil
	}
	return nil, nil, errors.New("no described operation")
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("round trip: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))

	route, params, err := v.findRoute(req)
	if err != nil {
		v.mu.Lock()
		v.undescribe = append(v.undescribe, req.Method+" "+req.URL.Path)
		v.mu.Unlock()
		return resp, nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		v.t.Errorf("%s %s -> %d (%s) does not match the description:\n%v\nbody: %.600s",
			req.Method, req.URL.Path, resp.StatusCode, route.Operation.OperationID, err, body)
	}
	v.mu.Lock()
	v.covered[route.Operation.OperationID] = append(v.covered[route.Operation.OperationID], resp.StatusCode)
	v.mu.Unlock()
	return resp, nil
}

// conformanceOperations are the operations the emulator implements that GitHub's description
// contains; each must be driven at least once.
var conformanceOperations = []string{
	"actions/create-workflow-dispatch",
	"actions/list-workflow-runs-for-repo", "actions/get-workflow-run", "actions/cancel-workflow-run",
	"checks/create", "checks/get", "checks/update", "checks/list-for-ref",
	"repos/check-collaborator", "repos/get-collaborator-permission-level",
	"repos/get-combined-status-for-ref", "repos/list-commit-statuses-for-ref", "repos/create-commit-status",
	"repos/create-dispatch-event",
	"git/list-matching-refs", "git/get-ref", "git/create-ref", "git/update-ref", "git/delete-ref",
	"issues/list-for-repo", "issues/create", "issues/get", "issues/update",
	"issues/add-sub-issue", "issues/list-sub-issues", "issues/remove-sub-issue", "issues/get-parent",
	"issues/list-comments", "issues/create-comment", "issues/list-comments-for-repo",
	"issues/get-comment", "issues/update-comment", "issues/delete-comment",
	"reactions/list-for-issue-comment", "reactions/create-for-issue-comment", "reactions/delete-for-issue-comment",
	"reactions/list-for-issue", "reactions/create-for-issue",
	"issues/list-labels-on-issue", "issues/add-labels", "issues/set-labels", "issues/remove-all-labels", "issues/remove-label",
	"issues/list-labels-for-repo", "issues/create-label", "issues/get-label",
	"pulls/list", "pulls/create", "pulls/get", "pulls/update", "pulls/list-files", "pulls/list-commits",
	"pulls/get-review-comment", "pulls/list-review-comments",
	"pulls/list-reviews", "pulls/create-review", "pulls/get-review", "pulls/dismiss-review", "pulls/submit-review",
	"rate-limit/get",
}

// TestConformance drives every emulated operation through an unmodified go-github v60 client
// and validates status, headers and body of each response against GitHub's description.
func TestConformance(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	vt := newValidatingTransport(t, s)
	ctx := context.Background()
	bot, bob, alice, rita := client(t, s, botLogin, vt), client(t, s, "bob", vt), client(t, s, "alice", vt), client(t, s, "rita", vt)

	must := func(what string, resp *github.Response, err error, want int) {
		t.Helper()
		if err != nil {
			var er *github.ErrorResponse
			if errors.As(err, &er) && er.Response.StatusCode == want {
				return
			}
			// go-github reports a 202 (a cancel GitHub has queued) as *AcceptedError.
			var ae *github.AcceptedError
			if errors.As(err, &ae) && want == 202 {
				return
			}
			t.Fatalf("%s: %v", what, err)
		}
		if resp.StatusCode != want {
			t.Fatalf("%s: status %d, want %d", what, resp.StatusCode, want)
		}
	}

	// Permissions and rate limit.
	_, resp, err := bot.Repositories.GetPermissionLevel(ctx, owner, repoName, "tina")
	must("permission", resp, err, 200)
	_, resp, err = bot.Repositories.GetPermissionLevel(ctx, owner, repoName, "nobody")
	must("permission of unknown user", resp, err, 404)
	_, resp, err = bot.Repositories.IsCollaborator(ctx, owner, repoName, "bob")
	must("is collaborator", resp, err, 204)
	_, resp, err = bot.RateLimit.Get(ctx)
	must("rate limit", resp, err, 200)

	// Issues.
	iss, resp, err := bob.Issues.Create(ctx, owner, repoName, &github.IssueRequest{Title: github.String("Task"), Body: github.String("do"), Labels: &[]string{"studio:role/dev"}})
	must("create issue", resp, err, 201)
	n := iss.GetNumber()
	_, resp, err = bot.Issues.Get(ctx, owner, repoName, n)
	must("get issue", resp, err, 200)
	_, resp, err = bot.Issues.Get(ctx, owner, repoName, 999)
	must("get missing issue", resp, err, 404)
	_, resp, err = bot.Issues.Edit(ctx, owner, repoName, n, &github.IssueRequest{Title: github.String("Task!"), Labels: &[]string{"studio:status/running"}})
	must("edit issue", resp, err, 200)
	_, resp, err = bot.Issues.ListByRepo(ctx, owner, repoName, &github.IssueListByRepoOptions{Labels: []string{"studio:status/running"}})
	must("list issues", resp, err, 200)

	// Sub-issues (go-github v60 has no methods for them: raw requests through the same client).
	sub, resp, err := bob.Issues.Create(ctx, owner, repoName, &github.IssueRequest{Title: github.String("Sub-task")})
	must("create sub-issue", resp, err, 201)
	subPath := fmt.Sprintf("repos/%s/%s/issues/%d/", owner, repoName, n)
	resp, err = call(t, bot, "POST", subPath+"sub_issues", map[string]any{"sub_issue_id": sub.GetID()}, nil)
	must("add sub-issue", resp, err, 201)
	resp, err = call(t, bot, "POST", subPath+"sub_issues", map[string]any{"sub_issue_id": sub.GetID()}, nil)
	must("add sub-issue again", resp, err, 422)
	resp, err = call(t, bot, "POST", subPath+"sub_issues", map[string]any{"sub_issue_id": 424242}, nil)
	must("add unknown sub-issue", resp, err, 404)
	resp, err = call(t, rita, "POST", subPath+"sub_issues", map[string]any{"sub_issue_id": sub.GetID()}, nil)
	must("add sub-issue as reader", resp, err, 403)
	resp, err = call(t, bot, "GET", subPath+"sub_issues", nil, nil)
	must("list sub-issues", resp, err, 200)
	resp, err = call(t, bot, "GET", fmt.Sprintf("repos/%s/%s/issues/%d/parent", owner, repoName, sub.GetNumber()), nil, nil)
	must("get parent", resp, err, 200)
	_, resp, err = bot.Issues.Get(ctx, owner, repoName, sub.GetNumber())
	must("get sub-issue", resp, err, 200)
	resp, err = call(t, bot, "GET", subPath+"parent", nil, nil)
	must("get missing parent", resp, err, 404)
	resp, err = call(t, bot, "DELETE", subPath+"sub_issue", map[string]any{"sub_issue_id": sub.GetID()}, nil)
	must("remove sub-issue", resp, err, 200)
	resp, err = call(t, bot, "DELETE", subPath+"sub_issue", map[string]any{"sub_issue_id": sub.GetID()}, nil)
	must("remove sub-issue again", resp, err, 404)

	// Comments, with pagination.
	var ids []int64
	for i := 0; i < 3; i++ {
		c, resp, err := bot.Issues.CreateComment(ctx, owner, repoName, n, &github.IssueComment{Body: github.String(fmt.Sprintf("c%d", i))})
		must("create comment", resp, err, 201)
		ids = append(ids, c.GetID())
	}
	_, resp, err = bot.Issues.CreateComment(ctx, owner, repoName, n, &github.IssueComment{Body: github.String(strings.Repeat("é", ghemu.MaxBodyRunes+1))})
	must("create too long comment", resp, err, 422)
	page, resp, err := bot.Issues.ListComments(ctx, owner, repoName, n, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}})
	must("list comments", resp, err, 200)
	if len(page) != 2 || resp.NextPage != 2 {
		t.Errorf("page 1: %d comments, next %d", len(page), resp.NextPage)
	}
	_, resp, err = bot.Issues.ListComments(ctx, owner, repoName, 0, nil)
	must("list repo comments", resp, err, 200)
	_, resp, err = bot.Issues.GetComment(ctx, owner, repoName, ids[0])
	must("get comment", resp, err, 200)
	_, resp, err = bot.Issues.EditComment(ctx, owner, repoName, ids[0], &github.IssueComment{Body: github.String("edited")})
	must("edit comment", resp, err, 200)
	resp, err = bot.Issues.DeleteComment(ctx, owner, repoName, ids[2])
	must("delete comment", resp, err, 204)

	// Reactions.
	_, resp, err = bob.Reactions.CreateIssueCommentReaction(ctx, owner, repoName, ids[0], "eyes")
	must("react", resp, err, 201)
	re, resp, err := bob.Reactions.CreateIssueCommentReaction(ctx, owner, repoName, ids[0], "eyes")
	must("react again", resp, err, 200)
	_, resp, err = bot.Reactions.ListIssueCommentReactions(ctx, owner, repoName, ids[0], nil)
	must("list reactions", resp, err, 200)
	resp, err = bob.Reactions.DeleteIssueCommentReaction(ctx, owner, repoName, ids[0], re.GetID())
	must("delete reaction", resp, err, 204)
	_, resp, err = bot.Reactions.CreateIssueReaction(ctx, owner, repoName, n, "rocket")
	must("react on issue", resp, err, 201)
	_, resp, err = bot.Reactions.ListIssueReactions(ctx, owner, repoName, n, nil)
	must("list issue reactions", resp, err, 200)

	// Labels.
	_, resp, err = bot.Issues.CreateLabel(ctx, owner, repoName, &github.Label{Name: github.String("studio:status/done"), Color: github.String("0e8a16")})
	must("create label", resp, err, 201)
	_, resp, err = bot.Issues.CreateLabel(ctx, owner, repoName, &github.Label{Name: github.String("studio:status/done")})
	must("create duplicate label", resp, err, 422)
	_, resp, err = bot.Issues.GetLabel(ctx, owner, repoName, "studio:status/done")
	must("get label", resp, err, 200)
	_, resp, err = bot.Issues.ListLabels(ctx, owner, repoName, nil)
	must("list labels", resp, err, 200)
	_, resp, err = bot.Issues.AddLabelsToIssue(ctx, owner, repoName, n, []string{"studio:status/done", "new-label"})
	must("add labels", resp, err, 200)
	_, resp, err = bot.Issues.ListLabelsByIssue(ctx, owner, repoName, n, nil)
	must("list issue labels", resp, err, 200)
	_, resp, err = bot.Issues.ReplaceLabelsForIssue(ctx, owner, repoName, n, []string{"studio:status/done", "studio:role/dev"})
	must("set labels", resp, err, 200)
	resp, err = bot.Issues.RemoveLabelForIssue(ctx, owner, repoName, n, "studio:role/dev")
	must("remove label", resp, err, 200)
	resp, err = bot.Issues.RemoveLabelForIssue(ctx, owner, repoName, n, "absent")
	must("remove absent label", resp, err, 404)
	resp, err = bot.Issues.RemoveLabelsForIssue(ctx, owner, repoName, n)
	must("remove all labels", resp, err, 204)

	// Pull requests.
	branchWithChange(t, s, "studio/task-1", map[string]string{"src/player/jump.gd": "extends Node\n\nfunc jump():\n\tprint(1)\n", "new.txt": "n\n"}, "docs/old.md")
	pr, resp, err := bot.PullRequests.Create(ctx, owner, repoName, &github.NewPullRequest{Title: github.String("Task"), Head: github.String("studio/task-1"), Base: github.String("main"), Body: github.String("Closes #1"), Draft: github.Bool(true)})
	must("create pull", resp, err, 201)
	pn := pr.GetNumber()
	_, resp, err = bot.PullRequests.Create(ctx, owner, repoName, &github.NewPullRequest{Title: github.String("Again"), Head: github.String(owner + ":studio/task-1"), Base: github.String("main")})
	must("create duplicate pull", resp, err, 422)
	_, resp, err = bot.PullRequests.List(ctx, owner, repoName, &github.PullRequestListOptions{Head: owner + ":studio/task-1", State: "open"})
	must("list pulls", resp, err, 200)
	_, resp, err = bot.PullRequests.Get(ctx, owner, repoName, pn)
	must("get pull", resp, err, 200)
	_, resp, err = bot.PullRequests.Edit(ctx, owner, repoName, pn, &github.PullRequest{Body: github.String("Closes #1\n\nplan")})
	must("edit pull", resp, err, 200)
	_, resp, err = bot.PullRequests.ListFiles(ctx, owner, repoName, pn, nil)
	must("list files", resp, err, 200)
	_, resp, err = bot.PullRequests.ListCommits(ctx, owner, repoName, pn, nil)
	must("list commits", resp, err, 200)

	// Reviews.
	rv, resp, err := bob.PullRequests.CreateReview(ctx, owner, repoName, pn, &github.PullRequestReviewRequest{Event: github.String("APPROVE"), Body: github.String("ok"),
		Comments: []*github.DraftReviewComment{{Path: github.String("src/player/jump.gd"), Line: github.Int(4), Side: github.String("RIGHT"), Body: github.String("nice")}}})
	must("approve", resp, err, 200)
	_, resp, err = bot.PullRequests.CreateReview(ctx, owner, repoName, pn, &github.PullRequestReviewRequest{Event: github.String("APPROVE")})
	must("self approve", resp, err, 422)
	_, resp, err = bot.PullRequests.ListReviews(ctx, owner, repoName, pn, nil)
	must("list reviews", resp, err, 200)
	_, resp, err = bot.PullRequests.GetReview(ctx, owner, repoName, pn, rv.GetID())
	must("get review", resp, err, 200)
	rcs, resp, err := bot.PullRequests.ListComments(ctx, owner, repoName, pn, nil)
	must("list review comments", resp, err, 200)
	if len(rcs) == 1 {
		_, resp, err = bot.PullRequests.GetComment(ctx, owner, repoName, rcs[0].GetID())
		must("get review comment", resp, err, 200)
	}
	_, resp, err = alice.PullRequests.DismissReview(ctx, owner, repoName, pn, rv.GetID(), &github.PullRequestReviewDismissalRequest{Message: github.String("stale")})
	must("dismiss review", resp, err, 200)
	pending, resp, err := alice.PullRequests.CreateReview(ctx, owner, repoName, pn, &github.PullRequestReviewRequest{Body: github.String("draft")})
	must("pending review", resp, err, 200)
	_, resp, err = alice.PullRequests.SubmitReview(ctx, owner, repoName, pn, pending.GetID(), &github.PullRequestReviewRequest{Event: github.String("COMMENT"), Body: github.String("done")})
	must("submit review", resp, err, 200)

	// Checks and statuses on the head commit.
	head := pr.GetHead().GetSHA()
	cr, resp, err := bot.Checks.CreateCheckRun(ctx, owner, repoName, github.CreateCheckRunOptions{Name: "studio/gate", HeadSHA: head, Status: github.String("in_progress"),
		Output: &github.CheckRunOutput{Title: github.String("Gate"), Summary: github.String("running")}})
	must("create check run", resp, err, 201)
	_, resp, err = bot.Checks.UpdateCheckRun(ctx, owner, repoName, cr.GetID(), github.UpdateCheckRunOptions{Name: "studio/gate", Conclusion: github.String("success"),
		Output: &github.CheckRunOutput{Title: github.String("Gate"), Summary: github.String("passed"), Annotations: []*github.CheckRunAnnotation{{Path: github.String("a"), StartLine: github.Int(1), EndLine: github.Int(1), AnnotationLevel: github.String("notice"), Message: github.String("m")}}}})
	must("update check run", resp, err, 200)
	_, resp, err = bot.Checks.GetCheckRun(ctx, owner, repoName, cr.GetID())
	must("get check run", resp, err, 200)
	_, resp, err = bot.Checks.ListCheckRunsForRef(ctx, owner, repoName, "studio/task-1", &github.ListCheckRunsOptions{CheckName: github.String("studio/gate")})
	must("list check runs", resp, err, 200)
	_, resp, err = bot.Repositories.CreateStatus(ctx, owner, repoName, head, &github.RepoStatus{State: github.String("success"), Context: github.String("studio/gate")})
	must("create status", resp, err, 201)
	_, resp, err = bot.Repositories.ListStatuses(ctx, owner, repoName, head, nil)
	must("list statuses", resp, err, 200)
	_, resp, err = bot.Repositories.GetCombinedStatus(ctx, owner, repoName, head, nil)
	must("combined status", resp, err, 200)

	// Git refs.
	_, resp, err = bot.Git.GetRef(ctx, owner, repoName, "heads/main")
	must("get ref", resp, err, 200)
	_, resp, err = bot.Git.GetRef(ctx, owner, repoName, "heads/none")
	must("get missing ref", resp, err, 404)
	_, resp, err = bot.Git.CreateRef(ctx, owner, repoName, &github.Reference{Ref: github.String("refs/studio/locks/a"), Object: &github.GitObject{SHA: github.String(pr.GetBase().GetSHA())}})
	must("create ref", resp, err, 201)
	_, resp, err = bot.Git.CreateRef(ctx, owner, repoName, &github.Reference{Ref: github.String("refs/studio/locks/a"), Object: &github.GitObject{SHA: github.String(pr.GetBase().GetSHA())}})
	must("create existing ref", resp, err, 422)
	_, resp, err = bot.Git.ListMatchingRefs(ctx, owner, repoName, &github.ReferenceListOptions{Ref: "studio/locks/"})
	must("matching refs", resp, err, 200)
	_, resp, err = bot.Git.UpdateRef(ctx, owner, repoName, &github.Reference{Ref: github.String("refs/studio/locks/a"), Object: &github.GitObject{SHA: github.String(head)}}, false)
	must("update ref", resp, err, 200)
	resp, err = bot.Git.DeleteRef(ctx, owner, repoName, "refs/studio/locks/a")
	must("delete ref", resp, err, 204)
	resp, err = bot.Git.DeleteRef(ctx, owner, repoName, "refs/studio/locks/a")
	must("delete missing ref", resp, err, 422)

	// Dispatches and the workflow runs they become.
	resp, err = bot.Actions.CreateWorkflowDispatchEventByFileName(ctx, owner, repoName, "studio.yml", github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]interface{}{"task": "1"}})
	must("workflow dispatch", resp, err, 204)
	var details struct {
		RunID int64 `json:"workflow_run_id"`
	}
	resp, err = call(t, bot, "POST", fmt.Sprintf("repos/%s/%s/actions/workflows/studio.yml/dispatches", owner, repoName),
		map[string]any{"ref": "main", "inputs": map[string]any{"task": "2"}, "return_run_details": true}, &details)
	must("workflow dispatch with run details", resp, err, 200)
	// The description declares no error answers for dispatches: GitHub's 404 and 422 are checked
	// in workflows_test.go.
	_, resp, err = bot.Actions.ListRepositoryWorkflowRuns(ctx, owner, repoName, &github.ListWorkflowRunsOptions{Event: "workflow_dispatch", Status: "queued", ListOptions: github.ListOptions{PerPage: 1}})
	must("list workflow runs", resp, err, 200)
	_, resp, err = bot.Actions.GetWorkflowRunByID(ctx, owner, repoName, details.RunID)
	must("get workflow run", resp, err, 200)
	resp, err = bot.Actions.CancelWorkflowRunByID(ctx, owner, repoName, details.RunID)
	must("cancel workflow run", resp, err, 202)
	resp, err = bot.Actions.CancelWorkflowRunByID(ctx, owner, repoName, details.RunID)
	must("cancel completed workflow run", resp, err, 409)
	_, resp, err = bot.Repositories.Dispatch(ctx, owner, repoName, github.DispatchRequestOptions{EventType: "studio"})
	must("repository dispatch", resp, err, 204)

	// Operations outside the description still answer (not validated).
	_, resp, err = bot.Repositories.Get(ctx, owner, repoName)
	must("get repo", resp, err, 200)
	fc, _, resp, err := bot.Repositories.GetContents(ctx, owner, repoName, "src/player/jump.gd", &github.RepositoryContentGetOptions{Ref: "main"})
	must("get contents", resp, err, 200)
	if c, _ := fc.GetContent(); !strings.Contains(c, "func jump") {
		t.Errorf("contents = %q", c)
	}
	// Git commits (the lock records of bot/lock.go): not in the trimmed description either.
	base, resp, err := bot.Git.GetCommit(ctx, owner, repoName, pr.GetBase().GetSHA())
	must("get git commit", resp, err, 200)
	_, resp, err = bot.Git.CreateCommit(ctx, owner, repoName, &github.Commit{Message: github.String("lock"), Tree: &github.Tree{SHA: base.GetTree().SHA}}, nil)
	must("create git commit", resp, err, 201)

	vt.mu.Lock()
	defer vt.mu.Unlock()
	var missing []string
	for _, op := range conformanceOperations {
		if len(vt.covered[op]) == 0 {
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations never exercised: %v", missing)
	}
}
