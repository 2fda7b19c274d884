package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDelegationSchemaIsStrict checks the schema the way strict structured output reads it: valid
// JSON, every object closed and every property required, so a model cannot leave a key out.
func TestDelegationSchemaIsStrict(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(DelegationSchema), &schema); err != nil {
		t.Fatalf("DelegationSchema is not JSON: %v", err)
	}
	var walk func(path string, node map[string]any)
	objects := 0
	walk = func(path string, node map[string]any) {
		if node["type"] == "object" {
			objects++
			if node["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties must be false", path)
			}
			props, _ := node["properties"].(map[string]any)
			var required []string
			for _, r := range node["required"].([]any) {
				required = append(required, r.(string))
			}
			var keys []string
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			slices.Sort(required)
			if !reflect.DeepEqual(keys, required) {
				t.Errorf("%s: required %v, properties %v: strict mode wants every property required", path, required, keys)
			}
			for k, v := range props {
				walk(path+"."+k, v.(map[string]any))
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("$", schema)
	if objects != 2 {
		t.Errorf("found %d objects, want the answer and the request", objects)
	}
	// The bounds the descriptions tell the model are the ones the parser enforces.
	for _, bound := range []string{fmt.Sprintf("at most %d", MaxDelegateRequests), fmt.Sprintf("at most %d characters", MaxDelegateString)} {
		if !strings.Contains(DelegationSchema, bound) {
			t.Errorf("schema does not say %q", bound)
		}
	}
	// The schema and the parser name the same keys.
	for _, k := range append(slices.Clone(delegationFields), requestFields...) {
		if !strings.Contains(DelegationSchema, `"`+k+`"`) {
			t.Errorf("schema lacks %q", k)
		}
	}
}

func TestParseDelegation(t *testing.T) {
	ok := `{"summary": " Planned the jump. ", "delegate": [
	  {"role": "gameplay-programmer", "objective": "Add coyote time.\r\nKeep the jump height.", "writeFiles": ["./src/player/jump.gd", "src/player/jump.gd"], "files": ["docs/design.md"], "dependsOn": []},
	  {"role": "qa-playtester", "objective": "Playtest the jump.", "writeFiles": [], "files": [], "dependsOn": [0, 0]}
	]}`
	got, err := ParseDelegation("Here is my answer:\n```json\n" + ok + "\n```")
	if err != nil {
		t.Fatalf("ParseDelegation: %v", err)
	}
	want := Delegation{Summary: "Planned the jump.", Delegate: []DelegationRequest{
		{Role: "gameplay-programmer", Objective: "Add coyote time.\nKeep the jump height.", WriteFiles: []string{"src/player/jump.gd"}, Files: []string{"docs/design.md"}},
		{Role: "qa-playtester", Objective: "Playtest the jump.", DependsOn: []int{0}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseDelegation =\n%#v\nwant\n%#v", got, want)
	}

	none, err := ParseDelegation(`{"summary": "Nothing to split.", "delegate": []}`)
	if err != nil || len(none.Delegate) != 0 || none.Summary != "Nothing to split." {
		t.Errorf("an empty delegate: %#v, %v", none, err)
	}

	long, err := ParseDelegation(fmt.Sprintf(`{"summary": %q, "delegate": []}`, strings.Repeat("é", MaxDelegationSummary+5)))
	if err != nil || !strings.HasSuffix(long.Summary, "…") || len([]rune(long.Summary)) != MaxDelegationSummary+1 {
		t.Errorf("a long summary is cut, not refused: %d runes, %v", len([]rune(long.Summary)), err)
	}
}

func TestParseDelegationRefuses(t *testing.T) {
	req := func(fields string) string { return `{"summary": "s", "delegate": [` + fields + `]}` }
	good := `{"role": "gameplay-programmer", "objective": "o", "writeFiles": ["a.go"], "files": [], "dependsOn": []}`
	with := func(key, value string) string {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(good), &m)
		if value == "" {
			delete(m, key)
		} else {
			m[key] = json.RawMessage(value)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	many := strings.TrimSuffix(strings.Repeat(good+",", MaxDelegateRequests+1), ",")
	paths, _ := json.Marshal(make([]string, MaxDelegatePaths+1))
	tests := []struct {
		name, answer, want string
	}{
		{"no object", "I delegated nothing.", "holds no JSON object"},
		{"not JSON", `{"summary": }`, "not valid JSON"},
		{"missing delegate", `{"summary": "s"}`, `lacks the field "delegate"`},
		{"unknown top-level key", `{"summary": "s", "delegate": [], "extra": 1}`, "unknown field `extra`"},
		{"null summary", `{"summary": null, "delegate": []}`, "`summary` must be a string"},
		{"null delegate", `{"summary": "s", "delegate": null}`, "`delegate` must be an array"},
		{"delegate an object", `{"summary": "s", "delegate": {}}`, "`delegate` must be an array"},
		{"too many requests", req(many), "asks for 21 child tasks; at most 20"},
		{"request not an object", req(`"build it"`), "`delegate[0]` must be an object"},
		{"missing key", req(with("dependsOn", "")), "`delegate[0]` lacks the field \"dependsOn\""},
		{"unknown key", req(with("priority", "1")), "`delegate[0]` has the unknown field `priority`"},
		{"null role", req(with("role", "null")), "`delegate[0].role` must be a string"},
		{"empty role", req(with("role", `"  "`)), "`delegate[0].role` is empty"},
		{"role not an id", req(with("role", `"Lead Designer"`)), "must be a role id"},
		{"empty objective", req(with("objective", `""`)), "`delegate[0].objective` is empty"},
		{"long objective", req(with("objective", fmt.Sprintf("%q", strings.Repeat("x", MaxDelegateString+1)))), "longer than 2000 characters"},
		{"control characters", req(with("objective", `"a\u0000b"`)), "control characters"},
		{"null writeFiles", req(with("writeFiles", "null")), "`delegate[0].writeFiles` must be an array of strings"},
		{"writeFiles of numbers", req(with("writeFiles", "[1]")), "`delegate[0].writeFiles` must be an array of strings"},
		{"too many paths", req(with("files", string(paths))), "lists 51 paths; at most 50"},
		{"glob", req(with("writeFiles", `["src/**"]`)), "must be a literal relative file path, not a glob"},
		{"directory", req(with("writeFiles", `["src/"]`)), "must be a file path, not a directory"},
		{"traversal", req(with("files", `["../secrets"]`)), "parent traversal"},
		{"absolute", req(with("writeFiles", `["/etc/passwd"]`)), "path is absolute"},
		{"into .git", req(with("writeFiles", `[".GIT/config"]`)), "cannot target .git"},
		{"empty path", req(with("writeFiles", `[""]`)), "path is empty"},
		{"long path", req(with("files", fmt.Sprintf("[%q]", strings.Repeat("a", MaxDelegateString+1)))), "a path is longer than 2000 characters"},
		{"dependsOn itself", req(with("dependsOn", "[0]")), "`delegate[0].dependsOn`: 0 is not an earlier request"},
		{"dependsOn a later request", req(good + "," + with("dependsOn", "[2]") + "," + good), "`delegate[1].dependsOn`: 2 is not an earlier request"},
		{"dependsOn negative", req(good + "," + with("dependsOn", "[-1]")), "-1 is not an earlier request"},
		{"dependsOn an issue", req(good + "," + with("dependsOn", `["#12"]`)), "`delegate[1].dependsOn` must be an array of request indexes"},
		{"dependsOn a fraction", req(good + "," + with("dependsOn", `[0.5]`)), "must be an array of request indexes"},
		{"dependsOn null entry", req(good + "," + with("dependsOn", `[null]`)), "must be an array of request indexes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDelegation(tt.answer)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseDelegation error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// studioProfile is a three-level profile: the producer (root) plans and delegates to a lead and to
// builders; the lead delegates to builders; a critic adjudicated by the root and a low-trust scout
// are leaves. max_depth 1 lets only the root delegate.
func studioProfile() ProfileFacts {
	return ProfileFacts{
		Root:          "producer",
		Orchestration: "mcp",
		Agents: map[string]AgentFacts{
			"producer":            {CanSpawn: []string{"lead-programmer", "gameplay-programmer", "qa-playtester", "custom-scout"}, Controls: map[string][]string{"lead-programmer": {"steer", "pause", "continue", "stop"}, "gameplay-programmer": {"steer", "stop"}}},
			"lead-programmer":     {CanSpawn: []string{"gameplay-programmer"}, Controls: map[string][]string{"gameplay-programmer": {"steer", "pause", "continue", "stop"}}},
			"gameplay-programmer": {},
			"qa-playtester":       {Verification: VerificationRootAdjudication},
			"custom-scout":        {Trust: TrustLow},
		},
		MaxDepth:            1,
		MaxActiveAgents:     5,
		MaxActiveWriters:    2,
		ContradictionPolicy: "root_adjudication",
	}
}

// studioRoles knows the profile's roles and which of them write; custom-ghost is a profile
// agent's name the repository has no role for.
func studioRoles(role string) (known, writes bool) {
	switch role {
	case "producer", "qa-playtester", "custom-scout":
		return true, false
	case "lead-programmer", "gameplay-programmer":
		return true, true
	}
	return false, false
}

func build(files ...string) DelegationRequest {
	return DelegationRequest{Role: "gameplay-programmer", Objective: "Build it.", WriteFiles: files}
}

func ask(role string, files ...string) DelegationRequest {
	return DelegationRequest{Role: role, Objective: "Do it.", WriteFiles: files}
}

func after(r DelegationRequest, deps ...int) DelegationRequest {
	r.DependsOn = deps
	return r
}

type verdict struct {
	accepted bool
	reason   string // a part of the reason; "" for an accepted request
}

func accepted() verdict             { return verdict{accepted: true} }
func refused(reason string) verdict { return verdict{reason: reason} }

func checkDecision(t *testing.T, got DelegationDecision, want []verdict) {
	t.Helper()
	if len(got.Requests) != len(want) {
		t.Fatalf("%d decisions, want %d: %+v", len(got.Requests), len(want), got.Requests)
	}
	for i, w := range want {
		d := got.Requests[i]
		if d.Index != i {
			t.Errorf("request %d: Index %d", i, d.Index)
		}
		if d.Accepted != w.accepted || (w.accepted && d.Reason != "") || !strings.Contains(d.Reason, w.reason) {
			t.Errorf("request %d (%s): accepted %v, reason %q; want accepted %v, reason containing %q", i, d.Request.Role, d.Accepted, d.Reason, w.accepted, w.reason)
		}
	}
}

// TestDecideDelegationThreeLevels is the issue's scenario: the root delegates, one builder is
// refused for overlapping writeFiles, and the lead's own request is refused for depth.
func TestDecideDelegationThreeLevels(t *testing.T) {
	root := DelegationFacts{
		Parent: "producer", Depth: 0, Profile: studioProfile(), RoleWrites: studioRoles,
		Requests: []DelegationRequest{
			ask("lead-programmer", "src/player/README.md"),
			build("src/player/jump.gd"),
			build("src/player/run.gd", "src/player/jump.gd"),
			ask("qa-playtester"),
		},
	}
	d := DecideDelegation(root)
	checkDecision(t, d, []verdict{
		accepted(),
		accepted(),
		refused("max_active_writers is 2 and 2 writing child tasks are already active or accepted: request 0 (`lead-programmer`), request 1 (`gameplay-programmer`)"),
		accepted(),
	})

	// With room for three writers, the third is refused for its overlap with the second instead.
	root.Profile.MaxActiveWriters = 3
	d = DecideDelegation(root)
	checkDecision(t, d, []verdict{accepted(), accepted(),
		refused("its writeFiles overlap request 1 (`gameplay-programmer`)'s: `src/player/jump.gd`; the write lock refs would refuse it too"),
		accepted(),
	})
	if got := d.Requests[0]; got.Depth != 1 || !got.Writes || !reflect.DeepEqual(got.LockKeys, []string{"src/player/README.md"}) {
		t.Errorf("the lead's decision: depth %d, writes %v, locks %q", got.Depth, got.Writes, got.LockKeys)
	}
	if got := d.Requests[3]; got.Writes || got.LockKeys != nil {
		t.Errorf("the critic is read-only: writes %v, locks %q", got.Writes, got.LockKeys)
	}
	if lines := d.RefusalLines(); !reflect.DeepEqual(lines, []string{"- Request 2 (`gameplay-programmer`): refused: " + d.Requests[2].Reason}) {
		t.Errorf("RefusalLines = %q", lines)
	}
	if len(d.Accepted()) != 3 || len(d.Refused()) != 1 || d.Refused()[0].Index != 2 {
		t.Errorf("Accepted %d, Refused %+v", len(d.Accepted()), d.Refused())
	}

	// The lead, now an active child at depth 1 with the root's builder beside it, asks for a
	// builder of its own: depth 2 is deeper than max_depth 1.
	lead := DelegationFacts{
		Parent: "lead-programmer", Depth: 1, Profile: studioProfile(), RoleWrites: studioRoles,
		Active: []ActiveChild{
			{Issue: 11, Role: "lead-programmer", Writes: true, WriteFiles: []string{"src/player/README.md"}},
			{Issue: 12, Role: "gameplay-programmer", Writes: true, WriteFiles: []string{"src/player/jump.gd"}},
		},
		Requests: []DelegationRequest{build("src/player/dash.gd")},
	}
	checkDecision(t, DecideDelegation(lead), []verdict{
		refused("a child of `lead-programmer` would be at depth 2, deeper than the profile's max_depth 1"),
	})

	// With max_depth 2 the lead may delegate, and an overlap with the root's active builder is
	// refused, as the lock refs would.
	lead.Profile.MaxDepth, lead.Profile.MaxActiveWriters = 2, 4
	lead.Requests = []DelegationRequest{build("src/player/jump.gd"), build("src/player/dash.gd")}
	checkDecision(t, DecideDelegation(lead), []verdict{
		refused("its writeFiles overlap #12 (`gameplay-programmer`)'s: `src/player/jump.gd`"),
		accepted(),
	})
}

func TestDecideDelegationReasons(t *testing.T) {
	builder := ActiveChild{Issue: 12, Role: "gameplay-programmer", Writes: true, WriteFiles: []string{"a.go"}}
	scout := ActiveChild{Issue: 13, Role: "custom-scout"}
	tests := []struct {
		name   string
		edit   func(*DelegationFacts)
		want   []verdict
		active []ActiveChild
	}{
		{name: "native orchestration files nothing",
			edit: func(f *DelegationFacts) {
				f.Profile.Orchestration = OrchestrationNative
				f.Requests = []DelegationRequest{ask("qa-playtester")}
			},
			want: []verdict{refused("orchestration is `native`")}},
		{name: "a parent outside the profile",
			edit: func(f *DelegationFacts) {
				f.Parent = "art-director"
				f.Requests = []DelegationRequest{ask("qa-playtester")}
			},
			want: []verdict{refused("`art-director` is not an agent of the profile, so it may not request child tasks")}},
		{name: "unknown studio role",
			edit: func(f *DelegationFacts) {
				f.Profile.Agents["custom-ghost"] = AgentFacts{}
				f.Requests = []DelegationRequest{ask("custom-ghost"), ask("qa-playtester")}
			},
			want: []verdict{refused("`custom-ghost` is not a studio role of this repository"), accepted()}},
		{name: "a studio role outside the profile",
			edit: func(f *DelegationFacts) {
				f.RoleWrites = func(string) (bool, bool) { return true, false }
				f.Requests = []DelegationRequest{ask("sound-designer")}
			},
			want: []verdict{refused("`sound-designer` is not an agent of the profile")}},
		{name: "not in can_spawn",
			edit: func(f *DelegationFacts) { f.Requests = []DelegationRequest{ask("producer")} },
			want: []verdict{refused("`producer` is not in `producer`'s can_spawn (`lead-programmer`, `gameplay-programmer`, `qa-playtester`, `custom-scout`)")}},
		{name: "a leaf may spawn nothing",
			edit: func(f *DelegationFacts) {
				f.Parent, f.Depth = "qa-playtester", 0
				f.Requests = []DelegationRequest{ask("custom-scout")}
			},
			want: []verdict{refused("`custom-scout` is not in `qa-playtester`'s can_spawn (none)")}},
		{name: "max_depth 0 allows no child",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxDepth = 0
				f.Requests = []DelegationRequest{ask("qa-playtester")}
			},
			want: []verdict{refused("would be at depth 1, deeper than the profile's max_depth 0")}},
		{name: "depends on a refused request",
			edit: func(f *DelegationFacts) {
				f.Requests = []DelegationRequest{ask("producer"), after(ask("qa-playtester"), 0), after(ask("custom-scout"), 1)}
			},
			want: []verdict{refused("can_spawn"), refused("it depends on request 0, which was refused"), refused("it depends on request 1, which was refused")}},
		{name: "depends on a later request (built by hand)",
			edit: func(f *DelegationFacts) {
				f.Requests = []DelegationRequest{after(ask("qa-playtester"), 1), ask("custom-scout")}
			},
			want: []verdict{refused("it depends on request 1, which is not an earlier request"), accepted()}},
		{name: "max_active_writers 0",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveWriters = 0
				f.Requests = []DelegationRequest{build("a.go"), ask("qa-playtester")}
			},
			want: []verdict{refused("max_active_writers is 0: the profile allows no writing child tasks"), accepted()}},
		{name: "active writers count",
			active: []ActiveChild{builder, scout},
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveWriters = 1
				f.Requests = []DelegationRequest{build("b.go"), ask("qa-playtester")}
			},
			want: []verdict{refused("max_active_writers is 1 and 1 writing child tasks are already active or accepted: #12 (`gameplay-programmer`)"), accepted()}},
		{name: "agents count the root, the active and the accepted",
			active: []ActiveChild{builder, scout},
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveAgents = 4
				f.Requests = []DelegationRequest{ask("qa-playtester"), ask("custom-scout"), build("b.go")}
			},
			want: []verdict{accepted(),
				refused("max_active_agents is 4 and 4 runs, counting the root, are already active or accepted: the root, #12 (`gameplay-programmer`), #13 (`custom-scout`), request 0 (`qa-playtester`)"),
				refused("max_active_agents is 4")}},
		{name: "max_active_agents 1 is the root alone",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveAgents = 1
				f.Requests = []DelegationRequest{ask("qa-playtester")}
			},
			want: []verdict{refused("max_active_agents is 1 and 1 runs, counting the root, are already active or accepted: the root")}},
		{name: "a refused request takes no capacity",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveAgents = 2
				f.Requests = []DelegationRequest{ask("producer"), ask("qa-playtester"), ask("custom-scout")}
			},
			want: []verdict{refused("can_spawn"), accepted(), refused("max_active_agents is 2")}},
		{name: "a writer without writeFiles",
			edit: func(f *DelegationFacts) { f.Requests = []DelegationRequest{build(), build("a.go")} },
			want: []verdict{refused("`gameplay-programmer` writes, so the request must list writeFiles; a run without them would be refused"), accepted()}},
		{name: "a reader's writeFiles take no lock",
			active: []ActiveChild{builder},
			edit:   func(f *DelegationFacts) { f.Requests = []DelegationRequest{ask("qa-playtester", "a.go")} },
			want:   []verdict{accepted()}},
		{name: "overlap with an active writer",
			active: []ActiveChild{builder, {Issue: 14, Role: "custom-scout", WriteFiles: []string{"b.go"}}},
			edit: func(f *DelegationFacts) {
				f.Requests = []DelegationRequest{build("a.go", "c.go"), build("b.go")}
			},
			want: []verdict{refused("its writeFiles overlap #12 (`gameplay-programmer`)'s: `a.go`"), accepted()}},
		{name: "an active writer without writeFiles holds the project-wide lock",
			active: []ActiveChild{{Issue: 15, Role: "lead-programmer", Writes: true}},
			edit:   func(f *DelegationFacts) { f.Requests = []DelegationRequest{build("a.go")} },
			want:   []verdict{refused("#15 (`lead-programmer`) holds the project-wide write lock, which overlaps every writeFiles")}},
		{name: "a glob built by hand takes the project-wide lock",
			edit: func(f *DelegationFacts) { f.Requests = []DelegationRequest{build("a.go"), build("src/**")} },
			want: []verdict{accepted(), refused("its writeFiles take the project-wide write lock, which overlaps request 0 (`gameplay-programmer`)'s")}},
		{name: "a chain on the same file is no overlap",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveWriters = 4
				f.Requests = []DelegationRequest{build("a.go"), after(ask("qa-playtester"), 0), after(build("a.go"), 1), build("a.go")}
			},
			want: []verdict{accepted(), accepted(), accepted(), refused("its writeFiles overlap request 0 (`gameplay-programmer`)'s: `a.go`")}},
		{name: "the first reason wins: can_spawn before depth and capacity",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxDepth, f.Profile.MaxActiveAgents = 0, 0
				f.Requests = []DelegationRequest{ask("producer"), ask("qa-playtester")}
			},
			want: []verdict{refused("can_spawn"), refused("max_depth 0")}},
		{name: "capacity before a missing writeFiles",
			edit: func(f *DelegationFacts) {
				f.Profile.MaxActiveWriters = 0
				f.Requests = []DelegationRequest{build()}
			},
			want: []verdict{refused("max_active_writers is 0")}},
		{name: "a nil lookup reads roles as the built-in phases",
			edit: func(f *DelegationFacts) {
				f.RoleWrites = nil
				f.Requests = []DelegationRequest{ask("qa-playtester", "a.go"), build("a.go"), build("a.go")}
			},
			want: []verdict{accepted(), accepted(), refused("overlap")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := DelegationFacts{Parent: "producer", Profile: studioProfile(), RoleWrites: studioRoles, Active: tt.active}
			tt.edit(&f)
			checkDecision(t, DecideDelegation(f), tt.want)
		})
	}
}

// TestDecideDelegationDeterministic decides the same facts from many goroutines at once (run the
// tests with -race): the decision is a function of the facts and the request order alone, reads
// no map in an order that shows, and changes none of its inputs.
func TestDecideDelegationDeterministic(t *testing.T) {
	f := DelegationFacts{
		Parent: "producer", Profile: studioProfile(), RoleWrites: studioRoles,
		Active: []ActiveChild{{Issue: 12, Role: "gameplay-programmer", Writes: true, WriteFiles: []string{"b.go", "a.go"}}},
		Requests: []DelegationRequest{
			build("a.go"), build("c.go"), after(build("c.go"), 1), ask("qa-playtester"), ask("custom-scout"), ask("lead-programmer", "d.go"), ask("producer"),
		},
	}
	f.Profile.MaxActiveWriters, f.Profile.MaxActiveAgents = 3, 5
	want := DecideDelegation(f)
	checkDecision(t, want, []verdict{
		refused("overlap #12"), accepted(), accepted(), accepted(),
		refused("max_active_agents is 5"), refused("max_active_writers is 3"), refused("can_spawn"),
	})
	before := fmt.Sprintf("%#v", f.Requests)
	const n = 8
	results := make(chan DelegationDecision, n)
	for range n {
		go func() { results <- DecideDelegation(f) }()
	}
	for range n {
		if got := <-results; !reflect.DeepEqual(got, want) {
			t.Fatalf("a concurrent decision differs:\n%+v\nwant\n%+v", got, want)
		}
	}
	if after := fmt.Sprintf("%#v", f.Requests); after != before {
		t.Errorf("DecideDelegation changed its requests:\n%s\nwas\n%s", after, before)
	}
	// Swapping two requests changes which one wins, and only that: the earlier accepted counts.
	f.Requests[1], f.Requests[3] = f.Requests[3], f.Requests[1]
	f.Requests[2].DependsOn = []int{3}
	f.Requests = f.Requests[:4]
	checkDecision(t, DecideDelegation(f), []verdict{refused("overlap #12"), accepted(), refused("not an earlier request"), accepted()})
}

func TestChildHoldsCapacity(t *testing.T) {
	tests := []struct {
		status string
		paused bool
		want   bool
	}{
		{"", false, true},
		{StatusReady, false, true},
		{StatusRunning, false, true},
		{StatusAwaitingApproval, false, true},
		{StatusAwaitingApproval, true, false},
		{StatusBlocked, false, false},
		{StatusDone, false, false},
		{StatusCancelled, false, false},
		{StatusSkipped, false, false},
	}
	for _, tt := range tests {
		if got := ChildHoldsCapacity(tt.status, tt.paused); got != tt.want {
			t.Errorf("ChildHoldsCapacity(%q, paused %v) = %v, want %v", tt.status, tt.paused, got, tt.want)
		}
	}
}

// A native-only child runs only as a Codex native subagent, which the action does not configure:
// it is never offered as a child task and a request for it is refused with that reason (issue 35,
// item 3).
func TestDelegationReadsTheChildsBackend(t *testing.T) {
	p := studioProfile()
	p.Orchestration = "hybrid"
	p.Agents["qa-playtester"] = AgentFacts{Verification: VerificationRootAdjudication, Backends: []string{BackendNative}}
	p.Agents["gameplay-programmer"] = AgentFacts{Backends: []string{BackendMCP, BackendNative}}
	d := DecideDelegation(DelegationFacts{Parent: "producer", Profile: p, RoleWrites: studioRoles, Requests: []DelegationRequest{
		{Role: "qa-playtester", Objective: "play it"},
		build("src/a.gd"),
	}})
	if d.Requests[0].Accepted || !strings.Contains(d.Requests[0].Reason, "`qa-playtester` runs only as a Codex native subagent (backends: native), and the action has no native path") {
		t.Errorf("native-only child: %+v", d.Requests[0])
	}
	if !d.Requests[1].Accepted {
		t.Errorf("a child with the mcp backend: %+v", d.Requests[1])
	}
	if got := ChildTaskRoles(p, "producer"); strings.Join(got, ",") != "lead-programmer,gameplay-programmer,custom-scout" {
		t.Errorf("ChildTaskRoles = %v", got)
	}
	p.Orchestration = OrchestrationNative
	if got := ChildTaskRoles(p, "producer"); len(got) != 0 {
		t.Errorf("native orchestration offers %v", got)
	}
}
