// Package examples holds the files `studio init` writes into a repository: the workflow users
// would otherwise copy from examples/workflows/studio.yml (embedded, so the two are one file and
// cannot drift) and the studio issue form, generated from policy.FormFields so the form's labels
// are exactly the ones policy.ParseTask reads back from a submitted issue.
package examples

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// Workflow is examples/workflows/studio.yml, byte for byte.
//
//go:embed workflows/studio.yml
var Workflow []byte

// ServedWorkflow is Workflow for a repository a `studio serve` App serves (docs/serve.md): only
// workflow_dispatch starts it (the server answers comments, labels and reviews, and dispatches
// what runs Codex; the other triggers would start a second run for the same comment), and the
// action writes as the App, with its id and key, so the dispatched run continues the server's
// status comment. It is derived from Workflow, so the two cannot drift; an error says Workflow
// changed where the derivation cuts.
func ServedWorkflow() ([]byte, error) {
	s := string(Workflow)
	for _, c := range []struct{ old, new string }{
		{"# Codex Studio: run Codex on task issues with `/studio run`, or by adding the `studio:run` label.\n",
			"# Codex Studio, served by the studio's GitHub App (`studio serve`, docs/serve.md): the server\n" +
				"# answers `/studio` comments, labels and reviews and dispatches this workflow for what runs Codex.\n"},
		{"  issue_comment:\n    types: [created]\n  issues:\n    types: [labeled]\n  pull_request:\n    types: [opened, synchronize, reopened, edited]\n  pull_request_review:\n    types: [submitted, dismissed]\n", ""},
		{"          github-token: ${{ secrets.GITHUB_TOKEN }}\n",
			"          github-token: ${{ secrets.GITHUB_TOKEN }}\n" +
				"          # The App's credentials: the run writes as the server's bot (docs/serve.md).\n" +
				"          app-id: ${{ vars.STUDIO_APP_ID }}\n" +
				"          app-private-key: ${{ secrets.STUDIO_APP_PRIVATE_KEY }}\n"},
	} {
		if !strings.Contains(s, c.old) {
			return nil, fmt.Errorf("examples/workflows/studio.yml no longer holds %q: the served workflow cannot be derived", strings.SplitN(c.old, "\n", 2)[0])
		}
		s = strings.Replace(s, c.old, c.new, 1)
	}
	return []byte(s), nil
}

// WorkflowPath and IssueFormPath are where `studio init` writes the two files in a repository.
const (
	WorkflowPath  = ".github/workflows/studio.yml"
	IssueFormPath = ".github/ISSUE_TEMPLATE/studio-task.yml"
)

// formItem is the text of one field of the issue form; the label comes from policy.FormFields.
type formItem struct {
	kind        string // dropdown, textarea or input
	description string
	placeholder string
	required    bool
}

var formItems = map[string]formItem{
	"role": {kind: "dropdown",
		description: "The studio role Codex plays. Leave it empty to take the role from a `{prefix}role/<role>` label instead."},
	"objective": {kind: "textarea", required: true,
		description: "What Codex should do and how you will know it is done. Codex reads this as quoted, untrusted text.",
		placeholder: "Make the jump feel snappier: shorter rise, the same height."},
	// Optional in the form: roles that change nothing need none, and the parser asks for it
	// (policy.CheckWriteFiles) once the role is known. The description says who needs it.
	"writeFiles": {kind: "textarea",
		description: "Required for roles that write (every role except {readonly}, which change nothing and need none). One repository path or glob (`**`) per line, plain lines (no bullets). Only these paths are ever committed; Codex's other changes are reported as blockers.",
		placeholder: "src/player/jump.gd\ntests/**"},
	"files": {kind: "textarea",
		description: "Files Codex should read first, one path per line.",
		placeholder: "design/gdd.md"},
	"dependsOn": {kind: "input",
		description: "Issues this task waits for, separated by commas.",
		placeholder: "#12, #14"},
	"verify": {kind: "input",
		description: "Run after Codex's changes: a command and its arguments separated by spaces, run without a shell (no quotes, pipes or variables).",
		placeholder: "godot --headless -s tests/run.gd"},
	"approvalScope": {kind: "textarea",
		description: "guided-studio and strict-studio: the approval scopes (paths or globs) the plan records, one per line; part of what an approval approves.",
		placeholder: "src/player/**"},
}

// IssueForm renders .github/ISSUE_TEMPLATE/studio-task.yml: a GitHub issue form whose submitted
// issues policy.ParseTask reads like a task block. roles are the dropdown's options (the roles
// `studio init` wrote to .codex/studio.json); labelPrefix is the action's label-prefix input
// (`studio:`), the form labels its issues <prefix>task.
func IssueForm(roles []string, labelPrefix string) []byte {
	q := strconv.Quote // a JSON-style double-quoted string is a YAML double-quoted scalar
	var b strings.Builder
	b.WriteString("# Written by `studio init`. A submitted form reads like a ```studio task block: comment\n")
	b.WriteString("# `/studio run` on the issue to run it. Keep the field labels: the studio finds each field by its label.\n")
	b.WriteString("name: Studio task\n")
	b.WriteString("description: A task Codex runs on its own branch when a writer comments /studio run.\n")
	b.WriteString("labels: [" + q(labelPrefix+"task") + "]\n")
	b.WriteString("body:\n")
	for _, f := range policy.FormFields {
		it := formItems[f.ID]
		b.WriteString("  - type: " + it.kind + "\n")
		b.WriteString("    id: " + f.ID + "\n")
		b.WriteString("    attributes:\n")
		b.WriteString("      label: " + q(f.Label) + "\n")
		desc := strings.ReplaceAll(it.description, "{prefix}", labelPrefix)
		desc = strings.ReplaceAll(desc, "{readonly}", readOnlyRoles(roles))
		b.WriteString("      description: " + q(desc) + "\n")
		if it.placeholder != "" {
			b.WriteString("      placeholder: " + q(it.placeholder) + "\n")
		}
		if it.kind == "dropdown" {
			b.WriteString("      options:\n")
			for _, r := range roles {
				b.WriteString("        - " + q(r) + "\n")
			}
		}
		b.WriteString("    validations:\n")
		b.WriteString("      required: " + strconv.FormatBool(it.required) + "\n")
	}
	return []byte(b.String())
}

// readOnlyRoles names the roles among roles that may not write (policy.RoleWrites), joined for
// a sentence: "producer and qa-playtester".
func readOnlyRoles(roles []string) string {
	var ro []string
	for _, r := range roles {
		if !policy.RoleWrites(r) {
			ro = append(ro, r)
		}
	}
	switch len(ro) {
	case 0:
		return "none"
	case 1:
		return ro[0]
	}
	return strings.Join(ro[:len(ro)-1], ", ") + " and " + ro[len(ro)-1]
}
