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

// ActiveChild is a child task of the orchestration that holds capacity now (ChildHoldsCapacity):
// the bot lists every such task under the root, the parent itself among them when the parent is
// not the root. The root is not listed; it is always counted once.
type ActiveChild struct {
	Issue      int
	Role       string
	Writes     bool     // the role may change files
	WriteFiles []string // its task's writeFiles; a writer without them holds the project-wide lock
}

// LockKeys are the write lock keys the child holds or will take.
func (c ActiveChild) LockKeys() []string { return LockKeys(c.WriteFiles, !c.Writes) }

// ChildHoldsCapacity reports whether a child task with this status counts against the profile's
// limits: ready (admitted, waiting for a slot or a dependency), running, and awaiting approval of
// its plan. A paused child (awaiting-approval after `/studio pause`) does not, nor does one that
// ended: as in the seed, terminal, suspended and paused jobs release admission capacity.
func ChildHoldsCapacity(status string, paused bool) bool {
	switch status {
	case "", StatusReady, StatusRunning:
		return true
	case StatusAwaitingApproval:
		return !paused
	}
	return false
}

// DelegationFacts are what DecideDelegation decides from.
type DelegationFacts struct {
	Parent string // the parent's role: the agent whose run answered
	// Depth is the parent's depth: the length of its parent-issue chain, 0 for the root's issue.
	// Its children are at Depth+1.
	Depth    int
	Profile  ProfileFacts
	Active   []ActiveChild
	Requests []DelegationRequest // as ParseDelegation returned them
	// RoleWrites says whether a role id is a studio role of the repository and whether its runs
	// change files (its phase). nil knows every role and reads writing from the built-in phases
	// (RoleWrites), which take an unknown role as one that writes, the safe side for locks.
	RoleWrites func(role string) (known, writes bool)
}

// RequestDecision is the decision on one request.
type RequestDecision struct {
	Index    int // the request's index in the answer
	Request  DelegationRequest
	Accepted bool
	// Reason says why a refused request was refused, for a person reading the parent issue; ""
	// when accepted.
	Reason string
	Writes bool // the child's role changes files
	// LockKeys are the write locks the child will take (LockKeys); nil for a read-only role.
	LockKeys []string
	Depth    int // the child's depth
}

// DelegationDecision is the decision on every request, in the answer's order.
type DelegationDecision struct {
	Requests []RequestDecision
}

// Accepted are the accepted requests, in order: each becomes a child task issue.
func (d DelegationDecision) Accepted() []RequestDecision { return d.filter(true) }

// Refused are the refused requests, in order: each is listed on the parent with its reason.
func (d DelegationDecision) Refused() []RequestDecision { return d.filter(false) }

func (d DelegationDecision) filter(accepted bool) []RequestDecision {
	var out []RequestDecision
	for _, r := range d.Requests {
		if r.Accepted == accepted {
			out = append(out, r)
		}
	}
	return out
}

// RefusalLines are the parent issue's lines for the refused requests: `- Request 2 (`builder`):
// refused: <reason>`. The objective is left to the caller, who quotes it as the untrusted text it
// is.
func (d DelegationDecision) RefusalLines() []string {
	var out []string
	for _, r := range d.Refused() {
		out = append(out, fmt.Sprintf("- Request %d (%s): refused: %s", r.Index, quoteIDs([]string{r.Request.Role})[0], r.Reason))
	}
	return out
}

// DecideDelegation accepts or refuses each request, in order, with the first reason that applies:
//
//  1. the parent is no agent of the profile, or the profile's orchestration is native (every
//     request is refused then);
//  2. the role is unknown: not a studio role, or not an agent of the profile;
//  3. the role is not in the parent's can_spawn;
//  4. depth: the child, at the parent's depth + 1, would be deeper than max_depth;
//  5. it depends on an earlier request that was refused (it could never start);
//  6. writers: a writing child beyond max_active_writers, counting the active writers and the
//     writers already accepted;
//  7. agents: a child beyond max_active_agents, counting the root, the active children and those
//     already accepted;
//  8. a writing role with no writeFiles (a run would refuse it);
//  9. writeFiles overlapping those of an active writer or an accepted one (LocksConflict over
//     LockKeys). The lock refs enforce this mechanically at run time as well; refusing it here
//     says why now, instead of leaving a child waiting on a lock it may never get. An accepted
//     request this one depends on (directly or through others) is not counted: they never run at
//     once, so a chain of children refining the same file is allowed.
//
// An accepted request counts against the ones after it, so the result depends only on the facts
// and the order of the requests.
func DecideDelegation(f DelegationFacts) DelegationDecision {
	roleWrites := f.RoleWrites
	if roleWrites == nil {
		roleWrites = func(role string) (bool, bool) { return true, RoleWrites(role) }
	}
	p := f.Profile
	parent, parentIsAgent := p.Agents[f.Parent]
	var blanket string
	switch {
	case p.Orchestration == OrchestrationNative:
		blanket = "the profile's orchestration is `native`: children run as Codex subagents inside the run, and the action files no child tasks"
	case !parentIsAgent:
		blanket = fmt.Sprintf("%s is not an agent of the profile, so it may not request child tasks", quoteIDs([]string{f.Parent})[0])
	}

	writers, agents := 0, 1 // the root is always counted
	var held []lockHolder   // active and accepted writers, in order
	for _, c := range f.Active {
		agents++
		if c.Writes {
			writers++
			held = append(held, lockHolder{name: fmt.Sprintf("#%d (%s)", c.Issue, quoteIDs([]string{c.Role})[0]), keys: c.LockKeys(), request: -1})
		}
	}
	active := activeNames(f.Active)
	var acceptedNames, acceptedWriterNames []string
	ancestors := make([][]int, len(f.Requests)) // accepted requests each one depends on, transitively
	out := DelegationDecision{}
	for i, r := range f.Requests {
		d := RequestDecision{Index: i, Request: r, Depth: f.Depth + 1}
		role := quoteIDs([]string{r.Role})[0]
		known, writes := roleWrites(r.Role)
		_, isAgent := p.Agents[r.Role]
		d.Writes = writes
		if writes {
			d.LockKeys = LockKeys(r.WriteFiles, false)
		}
		var deps []int
		for _, j := range r.DependsOn {
			if j >= 0 && j < i {
				deps = append(deps, j)
				deps = append(deps, ancestors[j]...)
			}
		}
		ancestors[i] = deps
		refusedDep := -1
		for _, j := range r.DependsOn {
			if j < 0 || j >= i || !out.Requests[j].Accepted {
				refusedDep = j
				break
			}
		}
		switch {
		case blanket != "":
			d.Reason = blanket
		case !known:
			d.Reason = fmt.Sprintf("%s is not a studio role of this repository", role)
		case !isAgent:
			d.Reason = fmt.Sprintf("%s is not an agent of the profile", role)
		case !slices.Contains(parent.CanSpawn, r.Role):
			d.Reason = fmt.Sprintf("%s is not in %s's can_spawn (%s)", role, quoteIDs([]string{f.Parent})[0], idList(parent.CanSpawn))
		case p.Agents[r.Role].NativeOnly():
			d.Reason = fmt.Sprintf("%s runs only as a Codex native subagent (backends: %s), and the action has no native path: it files child tasks only for roles with the `mcp` backend", role, strings.Join(p.Agents[r.Role].Backends, ", "))
		case d.Depth > p.MaxDepth:
			d.Reason = fmt.Sprintf("a child of %s would be at depth %d, deeper than the profile's max_depth %d", quoteIDs([]string{f.Parent})[0], d.Depth, p.MaxDepth)
		case refusedDep >= 0 && refusedDep < i:
			d.Reason = fmt.Sprintf("it depends on request %d, which was refused", refusedDep)
		case refusedDep >= 0:
			d.Reason = fmt.Sprintf("it depends on request %d, which is not an earlier request", refusedDep)
		case writes && writers+1 > p.MaxActiveWriters:
			d.Reason = capacityReason("max_active_writers", p.MaxActiveWriters, "writing child tasks", append(writerNames(f.Active), acceptedWriterNames...))
		case agents+1 > p.MaxActiveAgents:
			d.Reason = capacityReason("max_active_agents", p.MaxActiveAgents, "runs, counting the root,", append([]string{"the root"}, append(slices.Clone(active), acceptedNames...)...))
		case writes && len(r.WriteFiles) == 0:
			d.Reason = fmt.Sprintf("%s writes, so the request must list writeFiles; a run without them would be refused", role)
		default:
			if writes {
				d.Reason = overlap(d.LockKeys, held, ancestors[i])
			}
		}
		if d.Reason == "" {
			d.Accepted = true
			agents++
			name := fmt.Sprintf("request %d (%s)", i, role)
			acceptedNames = append(acceptedNames, name)
			if writes {
				writers++
				acceptedWriterNames = append(acceptedWriterNames, name)
				held = append(held, lockHolder{name: name, keys: d.LockKeys, request: i})
			}
		}
		out.Requests = append(out.Requests, d)
	}
	return out
}

// lockHolder is an active or accepted writer; request is its index, -1 for an active child.
type lockHolder struct {
	name    string
	keys    []string
	request int
}

// overlap is the refusal for keys that conflict with a holder's, or "" when none does. Holders
// among exempt (the requests this one depends on) never run beside it and are skipped.
func overlap(keys []string, held []lockHolder, exempt []int) string {
	for _, h := range held {
		if h.request >= 0 && slices.Contains(exempt, h.request) {
			continue
		}
		if !LocksConflict(keys, h.keys) {
			continue
		}
		switch {
		case slices.Contains(keys, ProjectWriteLockKey):
			return fmt.Sprintf("its writeFiles take the project-wide write lock, which overlaps %s's; the write lock refs would refuse it too", h.name)
		case slices.Contains(h.keys, ProjectWriteLockKey):
			return fmt.Sprintf("%s holds the project-wide write lock, which overlaps every writeFiles; the write lock refs would refuse it too", h.name)
		}
		var shared []string
		for _, k := range keys {
			if slices.Contains(h.keys, k) {
				shared = append(shared, k)
			}
		}
		return fmt.Sprintf("its writeFiles overlap %s's: %s; the write lock refs would refuse it too", h.name, strings.Join(quoteIDs(shared), ", "))
	}
	return ""
}

func activeNames(cs []ActiveChild) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("#%d (%s)", c.Issue, quoteIDs([]string{c.Role})[0]))
	}
	return out
}

func writerNames(cs []ActiveChild) []string {
	var out []string
	for _, c := range cs {
		if c.Writes {
			out = append(out, fmt.Sprintf("#%d (%s)", c.Issue, quoteIDs([]string{c.Role})[0]))
		}
	}
	return out
}

// capacityReason is the refusal for a full limit: its value and who fills it.
func capacityReason(key string, limit int, what string, holders []string) string {
	if len(holders) == 0 {
		return fmt.Sprintf("%s is %d: the profile allows no %s", key, limit, strings.TrimSuffix(what, ","))
	}
	return fmt.Sprintf("%s is %d and %d %s are already active or accepted: %s", key, limit, len(holders), what, strings.Join(holders, ", "))
}

// idList writes role ids as "`a`, `b`", or "none".
func idList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(quoteIDs(ids), ", ")
}
