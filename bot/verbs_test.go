package bot

import (
	"slices"
	"testing"

	"github.com/codex-studio/studio-action/prompts"
)

// TestPromptVerbsMatchTheDispatcher keeps prompts.Verbs, the commands guidance and role
// contracts may tell agents about, equal to the verbs this package dispatches.
func TestPromptVerbsMatchTheDispatcher(t *testing.T) {
	t.Parallel()
	var names []string
	for _, v := range verbs {
		names = append(names, v.name)
	}
	if !slices.Equal(names, prompts.Verbs) {
		t.Errorf("prompts.Verbs = %v, the dispatcher's table has %v: change both together", prompts.Verbs, names)
	}
}
