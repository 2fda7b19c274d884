package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/internal/runnermodel"
)

// The masks of secrets learnt late (an App token refreshed after about 55 minutes reaches the
// runner through secretSink) are issued where agent text cannot turn them off. The action's own
// wiring (newStepLog, botLog, secretSink) is given forged text on every path relayed text takes
// (the bot's log, a bot warning quoting it, a skip line), then the refreshed token: read by the
// runner model, every form of the token is masked, the warning is one command, and no line of the
// forged text is acted on.
func TestLateMasksFollowAgentTextAndAreProcessed(t *testing.T) {
	const refreshed = "ghs_refreshedInstallationToken0123456789"
	var stdout bytes.Buffer
	act, step := newStepLog(func(string) string { return "" }, &stdout)
	red := codex.NewRedactor()
	sink := &secretSink{mask: act.AddMask}
	sink.attach(red)
	log := botLog{Writer: red.LineWriter(step), act: act, redactor: red}

	fmt.Fprintf(log, "implementation stdout:\n%s", forged)
	log.Command("warning", "could not label the issue: "+forged)
	step.Printf("nothing to do: %s", forged)
	sink.add(gitops.SecretForms(refreshed)...)

	s := runnermodel.NewStep()
	s.Feed(runnermodel.Lines("stdout", stdout.String()))
	tokens := map[string]bool{}
	var warnings int
	for _, c := range s.Processed {
		switch {
		case c.Name == "stop-commands" && studioToken.MatchString(c.Data):
			tokens[c.Data] = true
		case tokens[c.Name]:
		case c.Name == "add-mask" && isForm(refreshed, c.Data):
		case c.Name == "warning" && c.Data == "could not label the issue: "+forged:
			warnings++
		default:
			t.Errorf("the runner processed %s", c)
		}
	}
	if warnings != 1 {
		t.Errorf("%d warnings processed, want the bot's one", warnings)
	}
	if stopped, _ := s.Stopped(); stopped {
		t.Error("the step ends with commands stopped")
	}
	masked := map[string]bool{}
	for _, m := range s.Masks {
		masked[m] = true
	}
	for i, f := range gitops.SecretForms(refreshed) {
		if !masked[f] {
			t.Errorf("form %d of the refreshed token is not masked", i)
		}
	}
	// The redactor learnt it as well, for what the studio writes elsewhere.
	if got := red.Redact("push with " + refreshed); strings.Contains(got, refreshed) {
		t.Errorf("the redactor does not know the refreshed token: %q", got)
	}
}

func isForm(token, v string) bool {
	for _, f := range gitops.SecretForms(token) {
		if f == v {
			return true
		}
	}
	return false
}
