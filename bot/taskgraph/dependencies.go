package taskgraph

import (
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
)

// StatusOf reads an issue's task status as a dependency sees it.
func StatusOf(prefix string, is hub.Issue) (string, error) {
	labelled := false
	for _, l := range is.Labels {
		if strings.HasPrefix(l, prefix+"status/") {
			labelled = true
			break
		}
	}
	if labelled || !strings.EqualFold(is.State, "closed") {
		return policy.StatusOfLabels(prefix, is.Labels)
	}
	if strings.EqualFold(is.StateReason, "not_planned") {
		return policy.StatusCancelled, nil
	}
	return policy.StatusDone, nil
}
