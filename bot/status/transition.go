package status

import (
	"context"
	"slices"
	"strings"
)

// Labeler is what a status change asks of GitHub's issue labels.
type Labeler interface {
	AddLabels(ctx context.Context, issue int, labels ...string) ([]string, error)
	RemoveLabel(ctx context.Context, issue int, label string) error
}

// Labels owns a task issue's one status label.
type Labels struct {
	GitHub Labeler
	Prefix string // the studio's label prefix ("studio:")
}

// Transition is every status change of a task issue: it ends with exactly one
// `<prefix>status/<status>` label. The new label is added first: GitHub answers with every label
// the issue has now, so a status label another run set after this event was delivered (known is
// the event's list, maybe old) is seen and removed too. changed is false when the issue already
// had that status and no other.
func (ls Labels) Transition(ctx context.Context, issue int, known []string, status string) (kept []string, from string, changed bool, err error) {
	prefix := ls.Prefix + "status/"
	want := prefix + status
	had := slices.Contains(known, want)
	now, err := ls.GitHub.AddLabels(ctx, issue, want)
	if err != nil {
		return nil, "", false, err
	}
	var was []string
	for _, l := range now {
		if strings.HasPrefix(l, prefix) && l != want {
			if err := ls.GitHub.RemoveLabel(ctx, issue, l); err != nil {
				return nil, "", false, err
			}
			was = append(was, strings.TrimPrefix(l, prefix))
			continue
		}
		kept = append(kept, l)
	}
	from = "none"
	if len(was) > 0 {
		from = strings.Join(was, ", ")
	}
	return kept, from, len(was) > 0 || !had, nil
}
