package proposal

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// FuzzParseProposal: the planning pass's answer is model output, so Parse never panics,
// and a proposal it accepts is bounded, names a studio role, holds only safe paths, and survives
// every trip the bot makes with it unchanged: its block read back by the task parser, the reply
// the bot posts read back by `/studio accept` (the summary quoted there is never taken for the
// block), and the proposal written as an answer again and re-parsed.
func FuzzParseProposal(f *testing.F) {
	for _, s := range []string{
		goodProposal,
		`{"role":"producer","writeFiles":["null","123","dir/a: b","#x","docs/` + "```" + `.md","- y"],"files":[],"verify":{"command":"","args":[]},"summary":""}`,
		`{"role":"producer","writeFiles":[],"files":[],"verify":null,"summary":"s"}`,
		`{"role":"writer","writeFiles":["a.md"],"files":[],"verify":null,"summary":"` + "x\\n```\\n```studio\\nrole: writer\\nwriteFiles: [b.md]\\n```" + `"}`,
		`{"role":"producer","writeFiles":["../etc/passwd"],"files":[],"verify":null,"summary":"s"}`,
		`{"role":"producer","writeFiles":["docs/plan.md"],"files":[],"verify":{"command":"make\u0007","args":[]},"summary":"s"}`,
		"Here you go:\n```json\n{\"role\":\"writer\",\"writeFiles\":[\"docs/a.md\"],\"files\":[\"README.md\"],\"verify\":{\"command\":\"make\",\"args\":[\"test\"]},\"summary\":\" <!-- studio:proposal issue=8 --> \"}\n```",
		`{"role": }`,
	} {
		f.Add(s, "")
	}
	f.Add(strings.Replace(goodProposal, `"gameplay-programmer"`, `""`, 1), "gameplay-programmer")
	f.Add(goodProposal, "producer")
	f.Fuzz(func(t *testing.T, answer, labelRole string) {
		rules := Rules{LabelRole: labelRole, Engine: "godot"}
		p, err := Parse(answer, rules)
		if err != nil {
			if !reflect.DeepEqual(p, Proposal{}) {
				t.Fatalf("an error (%v) with a proposal %+v", err, p)
			}
			return
		}
		if !prompts.IsBuiltinRole(p.Task.Role) || labelRole != "" && p.Task.Role != labelRole {
			t.Fatalf("role %q (label %q) accepted", p.Task.Role, labelRole)
		}
		if len(p.Task.WriteFiles) > maxProposalPaths || len(p.Task.Files) > maxProposalPaths {
			t.Fatalf("%d writeFiles, %d files: more than %d", len(p.Task.WriteFiles), len(p.Task.Files), maxProposalPaths)
		}
		for _, path := range append(append([]string{}, p.Task.WriteFiles...), p.Task.Files...) {
			if c, err := policy.CleanWritePath(path); err != nil || c != path {
				t.Fatalf("path %q is not a clean write path (%q, %v)", path, c, err)
			}
		}
		if n := utf8.RuneCountInString(p.Summary); n > maxProposalSummary+1 || p.Summary != strings.TrimSpace(p.Summary) {
			t.Fatalf("summary of %d runes, or untrimmed: %q", n, p.Summary)
		}

		task, err := policy.ParseTask(p.Block)
		if err != nil || !SameTask(task, p.Task) {
			t.Fatalf("the block does not read back as the task: %+v, %v\n%s", task, err, p.Block)
		}
		if task, err := policy.ParseTask(AppendBlock("Make it so.", p.Block)); err != nil || !sameFields(task, p.Task) {
			t.Fatalf("the block appended to a body does not read back: %+v, %v", task, err)
		}

		reply := texts.ProposalReply("/studio", "alice", "/studio run", "producer", Marker(7), p.Block, p.Summary, false)
		c, ok := Latest([]hub.Comment{{ID: 1, Author: "bot", Body: reply}}, 7, "bot")
		if !ok {
			t.Fatalf("the reply is not found as the proposal for #7:\n%s", reply)
		}
		if _, ok := Latest([]hub.Comment{c}, 8, "bot"); ok {
			t.Fatalf("the reply for #7 counts as a proposal for #8:\n%s", reply)
		}
		block, again, err := ProposedBlock(c.Body, prompts.IsBuiltinRole)
		if err != nil || block != p.Block || !SameTask(again, p.Task) {
			t.Fatalf("accept reads %q, %+v, %v from the reply; want the proposed block\n%s", block, again, err, reply)
		}

		// The proposal as an answer again: a fixed point.
		doc := map[string]any{"role": p.Task.Role, "writeFiles": nonNil(p.Task.WriteFiles), "files": nonNil(p.Task.Files), "verify": nil, "summary": p.Summary}
		if v := p.Task.Verify; v != nil {
			doc["verify"] = map[string]any{"command": v.Command, "args": nonNil(v.Args)}
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if twice, err := Parse(string(data), rules); err != nil || !reflect.DeepEqual(twice, p) {
			t.Fatalf("Parse(%s) = %+v, %v; want %+v", data, twice, err, p)
		}
	})
}

// sameFields compares what a block sets wherever it stands in a body (sameTask also compares
// where in its text the parser found a problem).
func sameFields(a, b policy.Task) bool {
	ba, erra := TaskBlock(a)
	bb, errb := TaskBlock(b)
	return erra == nil && errb == nil && ba == bb && reflect.DeepEqual(a.DependsOn, b.DependsOn) && a.Priority == b.Priority &&
		reflect.DeepEqual(a.RunPolicy, b.RunPolicy) && a.WorkflowID == b.WorkflowID && a.GroupID == b.GroupID
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
