package proposal

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/prompts"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

const goodProposal = `{"role":"gameplay-programmer","writeFiles":["./src/player/jump.gd","tests/test_jump.gd","src/player/jump.gd"],"files":["design/gdd.md"],"verify":{"command":"godot","args":["--headless","-s","tests/run.gd"]},"summary":"Tune the jump curve in the player script and cover it with a test."}`

// A valid answer becomes a block the task parser reads back as the same task, with writeFiles
// cleaned and deduplicated, and the reply (golden) shows it fenced, the explanation quoted as
// untrusted text, the hidden marker and the writer's two ways on.
func TestProposalReplyRendersTheValidatedBlock(t *testing.T) {
	t.Parallel()
	p, err := Parse(goodProposal, Rules{Engine: "godot"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Task.WriteFiles, ","); got != "src/player/jump.gd,tests/test_jump.gd" {
		t.Errorf("writeFiles = %s", got)
	}
	task, err := policy.ParseTask("Make the jump snappier.\n\n" + p.Block + "\n")
	if err != nil || !SameTask(task, p.Task) || task.Verify == nil || task.Verify.Command != "godot" {
		t.Fatalf("the block does not read back: %+v, %v\n%s", task, err, p.Block)
	}
	reply := texts.ProposalReply("/studio", "alice", "/studio run", "producer", Marker(7), p.Block, p.Summary, false)
	checkGolden(t, "proposal_reply.md", reply)
	c, ok := Latest([]hub.Comment{{ID: 1, Author: "github-actions[bot]", Body: reply}}, 7, "github-actions[bot]")
	if !ok {
		t.Fatal("the reply is not found as a proposal")
	}
	block, again, err := ProposedBlock(c.Body, prompts.IsBuiltinRole)
	if err != nil || block != p.Block || !SameTask(again, p.Task) {
		t.Errorf("proposedBlock = %q, %+v, %v", block, again, err)
	}
}

// Values YAML would read as something else, and backticks, survive the round trip exactly.
func TestProposalBlockQuotesAwkwardValues(t *testing.T) {
	t.Parallel()
	p, err := Parse(`{"role":"producer","writeFiles":["null","123","dir/a: b","#x","docs/`+"```"+`.md","- y"],"files":[],"verify":{"command":"","args":[]},"summary":""}`, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"null", "123", "dir/a: b", "#x", "docs/```.md", "- y"}
	if strings.Join(p.Task.WriteFiles, "|") != strings.Join(want, "|") {
		t.Errorf("writeFiles = %q\n%s", p.Task.WriteFiles, p.Block)
	}
	if p.Task.Verify != nil {
		t.Errorf("an empty verify is none, got %+v", p.Task.Verify)
	}
	if !strings.HasPrefix(p.Block, "````studio\n") {
		t.Errorf("a value with backticks needs a longer fence:\n%s", p.Block)
	}
}

// Every answer the task parser or the schema would refuse is an error naming why; none yields a
// block.
func TestParseProposalRefusesMalformedAnswers(t *testing.T) {
	t.Parallel()
	base := func(field, value string) string {
		fields := map[string]string{"role": `"producer"`, "writeFiles": `["docs/plan.md"]`, "files": `[]`, "verify": `null`, "summary": `"s"`}
		fields[field] = value
		var parts []string
		for _, k := range proposalFields {
			if v, ok := fields[k]; ok && v != "-" {
				parts = append(parts, `"`+k+`":`+v)
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	for name, tc := range map[string]struct {
		answer string
		rules  Rules
		want   string
	}{
		"parent traversal":  {answer: base("writeFiles", `["../etc/passwd"]`), want: "parent traversal"},
		"git dir":           {answer: base("writeFiles", `[".git/hooks/pre-commit"]`), want: ".git"},
		"nested git dir":    {answer: base("writeFiles", `["src/.git/config"]`), want: ".git"},
		"absolute":          {answer: base("writeFiles", `["/etc/x"]`), want: "absolute"},
		"empty writeFiles":  {answer: strings.Replace(base("writeFiles", `[]`), `"producer"`, `"gameplay-programmer"`, 1), want: "`writeFiles`: is required"},
		"null writeFiles":   {answer: base("writeFiles", `null`), want: "`writeFiles` must be an array"},
		"files traversal":   {answer: base("files", `["../x"]`), want: "`files`"},
		"missing field":     {answer: base("summary", "-"), want: `lacks the field "summary"`},
		"unknown field":     {answer: strings.TrimSuffix(base("", ""), "}") + `,"approvalScope":["x"]}`, want: `unknown field "approvalScope"`},
		"wrong type":        {answer: base("role", `7`), want: "`role` must be a string"},
		"unknown role":      {answer: base("role", `"hacker"`), want: "not a studio role"},
		"empty role":        {answer: base("role", `""`), want: "`role` is empty"},
		"other engine":      {answer: base("role", `"unity-specialist"`), rules: Rules{Engine: "godot"}, want: "not available for godot"},
		"label conflict":    {answer: base("role", `"writer"`), rules: Rules{LabelRole: "producer"}, want: "role label names `producer`"},
		"verify no command": {answer: base("verify", `{"command":"","args":["x"]}`), want: "`verify.command`"},
		"verify extra key":  {answer: base("verify", `{"command":"make","args":[],"shell":true}`), want: `unknown field "shell"`},
		"verify control":    {answer: base("verify", `{"command":"make\u0007","args":[]}`), want: "control characters"},
		"too many paths":    {answer: base("writeFiles", `[`+strings.TrimSuffix(strings.Repeat(`"a",`, 51), ",")+`]`), want: "at most 50"},
		"no JSON":           {answer: "I think you should edit the jump.", want: "no JSON object"},
		"broken JSON":       {answer: `{"role": }`, want: "not valid JSON"},
		"control in a path": {answer: base("writeFiles", `["a\u0000b"]`), want: "control characters"},
		"long value":        {answer: base("writeFiles", `["`+strings.Repeat("a", 301)+`"]`), want: "longer than 300"},
	} {
		p, err := Parse(tc.answer, tc.rules)
		if err == nil {
			t.Errorf("%s: accepted %q as\n%s", name, tc.answer, p.Block)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q lacks %q", name, err, tc.want)
		}
	}
	// The label's role fills an empty role.
	if p, err := Parse(strings.Replace(goodProposal, `"gameplay-programmer"`, `""`, 1), Rules{LabelRole: "gameplay-programmer"}); err != nil || p.Task.Role != "gameplay-programmer" {
		t.Errorf("label role: %+v, %v", p.Task, err)
	}
}

// Only the bot's own reply for this issue counts as a proposal, the latest one wins, and a block
// appended to a body that ends inside a hidden or code region would not be read (accept refuses).
func TestAcceptFindsOnlyTheBotsLatestProposal(t *testing.T) {
	t.Parallel()
	p, err := Parse(goodProposal, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	older := texts.ProposalReply("/studio", "alice", "/studio run", "producer", Marker(7), "```studio\nrole: writer\nwriteFiles: [a.md]\n```", "x", false)
	newer := texts.ProposalReply("/studio", "alice", "/studio run", "producer", Marker(7), p.Block, p.Summary, false)
	comments := []hub.Comment{
		{ID: 1, Author: "github-actions[bot]", Body: older},
		{ID: 2, Author: "github-actions[bot]", Body: newer},
		{ID: 3, Author: "mallory", Body: strings.Replace(newer, "tests/test_jump.gd", ".github/workflows/x.yml", 1)},
		{ID: 4, Author: "github-actions[bot]", Body: Marker(8) + "\n```studio\nrole: writer\nwriteFiles: [b.md]\n```"},
	}
	c, ok := Latest(comments, 7, "github-actions[bot]")
	if !ok || c.ID != 2 {
		t.Fatalf("latest proposal = %d, %v; want 2", c.ID, ok)
	}
	if _, ok := Latest(comments[2:3], 7, "github-actions[bot]"); ok {
		t.Error("a marker in someone else's comment counted")
	}
	for _, body := range []string{"Make it snappier <!-- note", "Make it snappier\n\n````\ncode"} {
		if _, err := policy.ParseTask(AppendBlock(body, p.Block)); err == nil {
			t.Errorf("a block appended to %q was read", body)
		}
	}
	if task, err := policy.ParseTask(AppendBlock("Make it snappier.\r\n", p.Block)); err != nil || !SameTask(task, p.Task) {
		t.Errorf("plain body: %+v, %v", task, err)
	}
}

// TestParseProposalReadOnlyRoleNeedsNoWriteFiles: a proposal for a role that never writes may
// leave writeFiles empty, as its task block may.
func TestParseProposalReadOnlyRoleNeedsNoWriteFiles(t *testing.T) {
	t.Parallel()
	p, err := Parse(`{"role":"producer","writeFiles":[],"files":[],"verify":null,"summary":"s"}`, Rules{})
	if err != nil || p.Task.Role != "producer" || len(p.Task.WriteFiles) != 0 {
		t.Fatalf("proposal = %+v, %v; want a producer task without writeFiles", p.Task, err)
	}
}

// Completing a block keeps every field the block set and takes the proposal's writeFiles; the
// completed block replaces the old one in place, reads back as the same task, and is placed only
// for the same writing role.
func TestCompleteReplacesTheBlockInPlace(t *testing.T) {
	t.Parallel()
	body := "Step.\n\n```studio\nrole: gameplay-programmer\ndependsOn: [\"#3\"]\npriority: 2\nfiles: [design/gdd.md]\nworkflowId: bugfix\ngroupId: bugfix-01234567\nrunPolicy: {review: false}\n```\n\nTail.\n"
	existing, err := policy.ParseTask(body)
	if err != nil {
		t.Fatal(err)
	}
	proposed := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd"}, Files: []string{"design/gdd.md", "src/player/player.gd"},
		Verify: &policy.Verification{Command: "godot", Args: []string{"--test"}}}
	block, task, err := Complete(existing, proposed)
	if err != nil {
		t.Fatal(err)
	}
	placed, ok := Place(body, block, true, existing.Role, task.Role, true)
	if !ok || !strings.HasPrefix(placed, "Step.\n\n```studio\n") || !strings.HasSuffix(placed, "```\n\nTail.\n") || strings.Count(placed, "```studio") != 1 {
		t.Fatalf("placed %v:\n%s", ok, placed)
	}
	got, err := policy.ParseTask(placed)
	if err != nil || !SameTask(got, task) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, task)
	}
	if got.Priority != 2 || got.WorkflowID != "bugfix" || got.GroupID != "bugfix-01234567" || len(got.DependsOn) != 1 || got.RunPolicy.Review == nil ||
		len(got.Files) != 2 || got.Verify == nil || got.Verify.Command != "godot" {
		t.Errorf("the completed block lost a field: %+v", got)
	}
	if _, ok := Place(body, block, true, "technical-artist", task.Role, true); ok {
		t.Error("placed a proposal over another role's block")
	}
	if _, ok := Place(body, block, true, existing.Role, task.Role, false); ok {
		t.Error("placed a proposal for a role that does not write")
	}
	if _, ok := ReplaceBlock("no block here", block); ok {
		t.Error("replaced a block in a body without one")
	}
}
