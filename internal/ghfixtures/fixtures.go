package ghfixtures

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed webhooks
var webhooks embed.FS

// Payload returns an official example payload, e.g. Payload("issue_comment", "created.payload.json").
func Payload(event, file string) ([]byte, error) {
	b, err := webhooks.ReadFile(path.Join("webhooks", event, file))
	if err != nil {
		return nil, fmt.Errorf("ghfixtures: payload %s/%s: %w", event, file, err)
	}
	return b, nil
}

// Files lists the example files of an event (X-GitHub-Event value), sorted.
func Files(event string) ([]string, error) {
	entries, err := fs.ReadDir(webhooks, path.Join("webhooks", event))
	if err != nil {
		return nil, fmt.Errorf("ghfixtures: list %s: %w", event, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Events lists the events that have examples, sorted.
func Events() []string {
	entries, _ := fs.ReadDir(webhooks, "webhooks")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Pointing carries the JSON objects that replace the example's own. A nil field keeps the
// example's object. Each object is merged over the example's object of the same name, key by
// key, so fields the caller does not model keep GitHub's example values.
type Pointing struct {
	Repository  json.RawMessage
	Sender      json.RawMessage
	Issue       json.RawMessage
	Comment     json.RawMessage
	Label       json.RawMessage
	PullRequest json.RawMessage
	Review      json.RawMessage
	// Changes replaces the "changes" object of edited events ({"body": {"from": "..."}}).
	Changes json.RawMessage
	// Set adds or replaces other top-level keys verbatim (e.g. "ref", "inputs", "workflow").
	Set map[string]json.RawMessage
	// Drop removes top-level keys, e.g. "organization" when the repository is user-owned.
	Drop []string
}

// Repoint returns the example event/file with p applied.
func Repoint(event, file string, p Pointing) ([]byte, error) {
	raw, err := Payload(event, file)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("ghfixtures: decode %s/%s: %w", event, file, err)
	}
	for key, v := range map[string]json.RawMessage{
		"repository": p.Repository, "sender": p.Sender, "issue": p.Issue, "comment": p.Comment,
		"label": p.Label, "pull_request": p.PullRequest, "review": p.Review,
	} {
		if v == nil {
			continue
		}
		merged, err := mergeObject(top[key], v)
		if err != nil {
			return nil, fmt.Errorf("ghfixtures: %s/%s: re-point %s: %w", event, file, key, err)
		}
		top[key] = merged
	}
	if p.Changes != nil {
		top["changes"] = p.Changes
	}
	for k, v := range p.Set {
		top[k] = v
	}
	for _, k := range p.Drop {
		delete(top, k)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(top); err != nil {
		return nil, fmt.Errorf("ghfixtures: encode %s/%s: %w", event, file, err)
	}
	return buf.Bytes(), nil
}

// mergeObject overlays over's keys on base (both JSON objects); a missing or null base yields over.
func mergeObject(base, over json.RawMessage) (json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(over, &o); err != nil {
		return nil, fmt.Errorf("overlay is not a JSON object: %w", err)
	}
	b := map[string]json.RawMessage{}
	if len(base) > 0 && string(base) != "null" {
		if err := json.Unmarshal(base, &b); err != nil {
			return nil, fmt.Errorf("example value is not a JSON object: %w", err)
		}
	}
	for k, v := range o {
		b[k] = v
	}
	out, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode merged object: %w", err)
	}
	return out, nil
}

// IssueCommentCreated re-points issue_comment/created.payload.json.
func IssueCommentCreated(p Pointing) ([]byte, error) {
	return Repoint("issue_comment", "created.payload.json", p)
}

// IssueCommentEdited re-points issue_comment/edited.payload.json.
func IssueCommentEdited(p Pointing) ([]byte, error) {
	return Repoint("issue_comment", "edited.payload.json", p)
}

// IssuesOpened re-points issues/opened.payload.json.
func IssuesOpened(p Pointing) ([]byte, error) { return Repoint("issues", "opened.payload.json", p) }

// IssuesEdited re-points issues/edited.payload.json.
func IssuesEdited(p Pointing) ([]byte, error) { return Repoint("issues", "edited.payload.json", p) }

// IssuesLabeled re-points issues/labeled.payload.json.
func IssuesLabeled(p Pointing) ([]byte, error) { return Repoint("issues", "labeled.payload.json", p) }

// IssuesUnlabeled re-points issues/unlabeled.payload.json.
func IssuesUnlabeled(p Pointing) ([]byte, error) {
	return Repoint("issues", "unlabeled.payload.json", p)
}

// PullRequestEvent re-points pull_request/<action>.payload.json (opened, synchronize, labeled,
// closed, ...). Actions without an example of their own ("edited") borrow the opened example
// with the action replaced, since the pull_request payload shape does not depend on the action.
func PullRequestEvent(action string, p Pointing) ([]byte, error) {
	file := action + ".payload.json"
	if _, err := Payload("pull_request", file); err != nil {
		file = "opened.payload.json"
		if p.Set == nil {
			p.Set = map[string]json.RawMessage{}
		}
		a, _ := json.Marshal(action)
		p.Set["action"] = a
	}
	return Repoint("pull_request", file, p)
}

// PullRequestReviewSubmitted re-points pull_request_review/submitted.payload.json.
func PullRequestReviewSubmitted(p Pointing) ([]byte, error) {
	return Repoint("pull_request_review", "submitted.payload.json", p)
}

// PullRequestReviewDismissed re-points pull_request_review/dismissed.payload.json.
func PullRequestReviewDismissed(p Pointing) ([]byte, error) {
	return Repoint("pull_request_review", "dismissed.payload.json", p)
}

// PullRequestReviewCommentCreated re-points pull_request_review_comment/created.payload.json.
func PullRequestReviewCommentCreated(p Pointing) ([]byte, error) {
	return Repoint("pull_request_review_comment", "created.payload.json", p)
}

// WorkflowDispatch re-points workflow_dispatch/payload.json; use p.Set for "ref", "inputs"
// and "workflow".
func WorkflowDispatch(p Pointing) ([]byte, error) {
	return Repoint("workflow_dispatch", "payload.json", p)
}
