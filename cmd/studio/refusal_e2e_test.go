package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// A first run whose model call the API refuses, through the whole action with the real Codex CLI
// (proxy, jail, retries as configured): the issue says what the API said and what to change, the
// task is labelled blocked, the step fails, and the branch output names no branch, since none
// was pushed. Measured on main: "Codex call failed (exit=1)" and "reached max fix passes (1)", 3
// Codex calls (6 for the 404), a green step and branch=studio/task-1.
func TestRefusedModelCallFailsTheStepAndSaysWhatToChange(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	// Reserved, not a closed listener's port: the parallel tests' servers listen on 127.0.0.1:0
	// and one of them could take a freed port and answer.
	closed, err := fakemodel.ReserveClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	closedURL := closed.URL
	for _, tc := range []struct {
		name    string
		refusal *fakemodel.Refusal // nil: the base URL is a closed port
		inputs  map[string]string
		head    string
		words   string
		change  string
	}{
		// The API echoes the key it refuses (the real one quotes its ends): it must be masked.
		{"bad key", ptr(fakemodel.InvalidKey(sandbox.OpenAIKey)), nil, "**The model API refused the call (HTTP 401)**",
			"Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys.", "`openai-api-key`"},
		{"model the account cannot use", ptr(fakemodel.ModelNotFound("gpt-5.5")), map[string]string{"INPUT_MODEL": "gpt-5.5"}, "**The model API refused the call**",
			"The model `gpt-5.5` does not exist or you do not have access to it.", "set the `model` input to a model the account can use"},
		{"closed port", nil, map[string]string{"INPUT_OPENAI-BASE-URL": closedURL}, "**The model API did not answer**",
			"model proxy: the model API at " + closedURL + " is unreachable: dial tcp " + closed.Addr + ": connect: connection refused", "check the `openai-base-url` input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, err := fakemodel.Start(fakemodel.Script{Refuse: tc.refusal})
			if err != nil {
				t.Fatal(err)
			}
			defer model.Close()
			inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			w := newWorld(t, nil)
			n := w.issue("Make the jump snappier", taskBody)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			start := time.Now()
			res := w.run("issue_comment", payload, inputs)
			if d := time.Since(start); d > time.Minute {
				t.Errorf("the refused run took %s", d) // loose: it catches a hang, not a slowdown
			}

			if res.code != exitError || res.outputs["status"] != "error" || res.outputs["branch"] != "" || res.outputs["pull-request"] != "" {
				t.Fatalf("exit %d, outputs %v; want a failed step, status error, no branch or pull request\nstdout:\n%s", res.code, res.outputs, res.stdout)
			}
			annotation := "::error::" + strings.ToLower(strings.Trim(tc.head, "*")[:1]) + strings.Trim(tc.head, "*")[1:] + ": "
			if !strings.Contains(res.stdout, annotation) || !strings.Contains(res.stdout, tc.change) {
				t.Errorf("no error annotation with what to change:\n%s", res.stdout)
			}
			status := w.botComments(n)
			if len(status) != 1 {
				t.Fatalf("bot comments = %d", len(status))
			}
			for _, want := range []string{tc.head, "```text\n" + tc.words + "\n```", "**What to change:** ", tc.change, "Then comment `/studio run` again.", "[ ] :x: Codex running", "Verdict: **error**"} {
				if !strings.Contains(status[0].Body, want) {
					t.Errorf("status comment lacks %q:\n%s", want, status[0].Body)
				}
			}
			if strings.Contains(status[0].Body, "max fix passes") || strings.Contains(status[0].Body, "Codex call failed") {
				t.Errorf("the status comment still reads as a task failure:\n%s", status[0].Body)
			}
			if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/error") || slices.Contains(labels, "studio:status/running") {
				t.Errorf("labels = %v", labels)
			}
			summary, _ := w.Summary()
			if !strings.Contains(summary, "## Codex Studio: error") || !strings.Contains(summary, tc.words) || !strings.Contains(summary, tc.change) {
				t.Errorf("job summary lacks the refusal:\n%s", summary)
			}
			if w.branchExists("studio/task-1") || len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) != 0 {
				t.Error("a branch or pull request was made for a run that wrote nothing")
			}
			// One Codex call, which Codex itself retried at most twice; no fix pass, no review.
			if reqs := len(model.Requests()); tc.refusal != nil && (reqs == 0 || reqs > 3) {
				t.Errorf("the model saw %d requests, want those of one Codex call (1 to 3)", reqs)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
