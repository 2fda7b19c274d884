package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Delegation (seed-guidance §4 "On GitHub", issue 14). A role whose profile agent has can_spawn
// ends its run, in every phase, with a JSON final message holding its summary and the child tasks
// it asks for. The answer is untrusted model output: ParseDelegation checks its shape and bounds,
// and DecideDelegation checks each request against the profile and the orchestration's state.
// Accepted requests become child task issues; refused ones are listed on the parent with the
// reason.

// DelegationSchema is the JSON Schema the spawning role answers with (`codex exec
// --output-schema`). Like ReviewSchema and ProposalSchema in bot, it is written for strict
// structured output: every property required, no other keys. Bounds are stated in the
// descriptions rather than as schema keywords, which strict mode does not take everywhere;
// ParseDelegation enforces them.
//
// dependsOn holds indexes of earlier requests in the same array, not issue numbers: the model does
// not know the numbers of issues that do not exist yet, and an issue number from a model could
// name any issue of the repository, unrelated or not a task at all. The action turns each index
// into the child issue it filed for that request.
const DelegationSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["summary", "delegate"],
  "properties": {
    "summary": {"type": "string", "description": "what this run did and found, for the issue's readers"},
    "delegate": {
      "type": "array",
      "description": "child tasks to request, at most 20; an empty array requests none",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["role", "objective", "writeFiles", "files", "dependsOn"],
        "properties": {
          "role": {"type": "string", "description": "the studio role id of the child; it must be in this role's can_spawn"},
          "objective": {"type": "string", "description": "what the child must achieve: scope, non-goals, deliverable and the validation evidence expected (at most 2000 characters)"},
          "writeFiles": {"type": "array", "items": {"type": "string"}, "description": "literal repository-relative file paths the child may change (no globs); required for a role that writes, empty for a read-only role"},
          "files": {"type": "array", "items": {"type": "string"}, "description": "literal repository-relative file paths the child should read for context"},
          "dependsOn": {"type": "array", "items": {"type": "integer"}, "description": "indexes (from 0) of earlier entries of this delegate array that must be done before this child starts"}
        }
      }
    }
  }
}
`

// Bounds on a delegation answer: far above any sensible plan, low enough that one answer cannot
// flood the repository with issues or the parent with text.
const (
	// MaxDelegateRequests is the most child tasks one answer may ask for.
	MaxDelegateRequests = 20
	// MaxDelegateString is the longest role, objective or path, in characters.
	MaxDelegateString = 2_000
	// MaxDelegatePaths is the most writeFiles or files entries one request may list.
	MaxDelegatePaths = 50
	// MaxDelegationSummary is the summary's length; a longer one is cut with "…", as a proposal's
	// summary is, since the summary is the run's report and refusing it would lose the run.
	MaxDelegationSummary = 2_000
)

// Delegation is a validated delegation answer.
type Delegation struct {
	// Summary is the run's own report: untrusted, shown only as quoted text.
	Summary  string
	Delegate []DelegationRequest
}

// DelegationRequest is one child task asked for.
type DelegationRequest struct {
	Role string
	// Objective is untrusted model text: it becomes the child issue's description, which Codex reads
	// as quoted input.
	Objective  string
	WriteFiles []string // cleaned literal paths (CleanLiteralPath), each once, in the order given
	Files      []string // likewise
	// DependsOn are indexes of earlier requests in the same answer, ascending, each once.
	DependsOn []int
}

var (
	delegationFields = []string{"summary", "delegate"}
	requestFields    = []string{"role", "objective", "writeFiles", "files", "dependsOn"}
)

// ParseDelegation validates a spawning role's final message strictly: one JSON object (prose or a
// code fence around it is tolerated, as for the review) with exactly the schema's keys and types,
// no nulls, at most MaxDelegateRequests requests, each with a role id, a non-empty objective of at
// most MaxDelegateString characters without control characters (line breaks and tabs aside),
// literal paths by the seed's rule (CleanLiteralPath) and dependsOn naming only earlier requests.
// Any problem refuses the whole answer: a malformed answer is the model's failure, and guessing
// which part it meant would file tasks nobody asked for. The error names the field, in words for
// the status comment.
func ParseDelegation(finalMessage string) (Delegation, error) {
	text := strings.TrimSpace(finalMessage)
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return Delegation{}, errors.New("the answer holds no JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err != nil {
		return Delegation{}, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	if err := exactFields(raw, delegationFields, "the answer"); err != nil {
		return Delegation{}, err
	}
	var d Delegation
	if err := strictJSON(raw["summary"], &d.Summary); err != nil {
		return Delegation{}, errors.New("`summary` must be a string")
	}
	d.Summary = strings.TrimSpace(d.Summary)
	if r := []rune(d.Summary); len(r) > MaxDelegationSummary {
		d.Summary = string(r[:MaxDelegationSummary]) + "…"
	}
	var items []json.RawMessage
	if !isJSONArray(raw["delegate"]) || json.Unmarshal(raw["delegate"], &items) != nil {
		return Delegation{}, errors.New("`delegate` must be an array of requests")
	}
	if len(items) > MaxDelegateRequests {
		return Delegation{}, fmt.Errorf("`delegate` asks for %d child tasks; at most %d", len(items), MaxDelegateRequests)
	}
	for i, item := range items {
		r, err := parseRequest(item, i)
		if err != nil {
			return Delegation{}, err
		}
		d.Delegate = append(d.Delegate, r)
	}
	return d, nil
}

func parseRequest(data json.RawMessage, i int) (DelegationRequest, error) {
	at := fmt.Sprintf("delegate[%d]", i)
	var raw map[string]json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) || json.Unmarshal(data, &raw) != nil {
		return DelegationRequest{}, fmt.Errorf("`%s` must be an object {role, objective, writeFiles, files, dependsOn}", at)
	}
	if err := exactFields(raw, requestFields, "`"+at+"`"); err != nil {
		return DelegationRequest{}, err
	}
	var r DelegationRequest
	if err := strictJSON(raw["role"], &r.Role); err != nil {
		return r, fmt.Errorf("`%s.role` must be a string", at)
	}
	r.Role = strings.TrimSpace(r.Role)
	switch {
	case r.Role == "":
		return r, fmt.Errorf("`%s.role` is empty", at)
	case utf8.RuneCountInString(r.Role) > MaxDelegateString || !roleIDShape.MatchString(r.Role):
		return r, fmt.Errorf("`%s.role` must be a role id such as gameplay-programmer (lowercase letters, digits and hyphens)", at)
	}
	if err := strictJSON(raw["objective"], &r.Objective); err != nil {
		return r, fmt.Errorf("`%s.objective` must be a string", at)
	}
	r.Objective = strings.TrimSpace(strings.ReplaceAll(r.Objective, "\r\n", "\n"))
	switch {
	case r.Objective == "":
		return r, fmt.Errorf("`%s.objective` is empty; say what the child must achieve", at)
	case utf8.RuneCountInString(r.Objective) > MaxDelegateString:
		return r, fmt.Errorf("`%s.objective` is longer than %d characters", at, MaxDelegateString)
	case strings.IndexFunc(r.Objective, func(c rune) bool { return unicode.IsControl(c) && c != '\n' && c != '\t' }) >= 0:
		return r, fmt.Errorf("`%s.objective` contains control characters", at)
	}
	var err error
	if r.WriteFiles, err = delegatePaths(raw["writeFiles"], at+".writeFiles"); err != nil {
		return r, err
	}
	if r.Files, err = delegatePaths(raw["files"], at+".files"); err != nil {
		return r, err
	}
	var deps []*int // pointers, so a null entry is refused rather than read as request 0
	if !isJSONArray(raw["dependsOn"]) || json.Unmarshal(raw["dependsOn"], &deps) != nil || slices.Contains(deps, nil) {
		return r, fmt.Errorf("`%s.dependsOn` must be an array of request indexes (integers)", at)
	}
	for _, p := range deps {
		d := *p
		if d < 0 || d >= i {
			return r, fmt.Errorf("`%s.dependsOn`: %d is not an earlier request; name requests by their index in `delegate`, from 0, each after the requests it depends on", at, d)
		}
		if !slices.Contains(r.DependsOn, d) {
			r.DependsOn = append(r.DependsOn, d)
		}
	}
	slices.Sort(r.DependsOn)
	return r, nil
}

// delegatePaths reads a list of literal paths: cleaned by the seed's rule for tasks created by
// command (no globs, no directories, inside the repository, never .git), each once.
func delegatePaths(data json.RawMessage, at string) ([]string, error) {
	var list []string
	if !isJSONArray(data) || json.Unmarshal(data, &list) != nil {
		return nil, fmt.Errorf("`%s` must be an array of strings", at)
	}
	if len(list) > MaxDelegatePaths {
		return nil, fmt.Errorf("`%s` lists %d paths; at most %d", at, len(list), MaxDelegatePaths)
	}
	var out []string
	for _, p := range list {
		if utf8.RuneCountInString(p) > MaxDelegateString {
			return nil, fmt.Errorf("`%s`: a path is longer than %d characters", at, MaxDelegateString)
		}
		c, err := CleanLiteralPath(p, "`"+at+"`")
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// exactFields refuses a missing key and an unknown one; what names the object in the message.
func exactFields(raw map[string]json.RawMessage, fields []string, what string) error {
	for _, k := range fields {
		if _, ok := raw[k]; !ok {
			return fmt.Errorf("%s lacks the field %q", what, k)
		}
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains(fields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown) // the first in order, so the message does not depend on map order
		return fmt.Errorf("%s has the unknown field %s", what, quoteIDs(unknown[:1])[0])
	}
	return nil
}

// strictJSON decodes a value that must not be null (encoding/json leaves the target unchanged on
// null, which would read a missing answer as an empty one).
func strictJSON(data json.RawMessage, dst any) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return errors.New("null")
	}
	return json.Unmarshal(data, dst)
}

func isJSONArray(data json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(data), []byte("["))
}
