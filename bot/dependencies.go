package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// A task's dependencies (its block's dependsOn) must be done before `/studio run` starts it. The
// seed's `task run` checked nothing (quirk A.1), so a task whose dependency had failed ran anyway;
// here the run is refused before any Codex call, branch or pull request, naming every dependency
// that is not done and why (policy.UnmetDependencies has the seed's words).
//
// A dependency's status is its issue's status label (policy.StatusOfLabels). An issue without
// one is read by its state: open is ready (it never ran), closed as completed is done (a person
// finished it by hand, or the issue predates the studio), closed as not planned is cancelled.

// unmetDependencies lists why the task on this run's issue may not start yet, one line per
// dependency that is not done, in the order the block gives them; none when it may start. Each
// dependency is one issue read (the memo's, so a dependency read earlier in the event is not read
// again).
func (r *run) unmetDependencies(ctx context.Context, task policy.Task) ([]string, error) {
	deps, err := task.Dependencies()
	if err != nil {
		return []string{err.Error()}, nil
	}
	self := r.tr.Issue
	var out []string
	for _, d := range deps {
		if d == self {
			out = append(out, texts.DependsOnItself(self))
			continue
		}
		var known []policy.GraphTask
		is, err := r.ev.gh.Issue(ctx, d)
		switch {
		case errors.Is(err, hub.ErrNotFound):
			// Not in known: the seed's "depends on unknown task".
		case err != nil:
			return nil, fmt.Errorf("read dependency #%d of #%d: %w", d, self, err)
		case is.IsPull:
			out = append(out, texts.DependsOnPull(self, d))
			continue
		default:
			status, err := taskgraph.StatusOf(r.cfg.LabelPrefix, is)
			if err != nil {
				out = append(out, texts.DependencyUnreadable(self, d, err))
				continue
			}
			known = append(known, policy.GraphTask{Issue: d, Status: status})
		}
		out = append(out, policy.UnmetDependencies(policy.GraphTask{Issue: self, DependsOn: []int{d}}, known)...)
	}
	return out, nil
}

// checkDependencies is the run's dependency gate, between the parsed task and everything that
// acts on it: a task whose dependencies are not done ends blocked, with each reason, before any
// Codex call or branch. A dry run changes nothing, so it only notes the refusal (refusedNote)
// and goes on to show its diagnostics. stop reports that the run has ended.
func (r *run) checkDependencies(ctx context.Context, task policy.Task) (stop bool, err error) {
	unmet, err := r.unmetDependencies(ctx, task)
	if err != nil || len(unmet) == 0 {
		return false, err
	}
	reason := texts.DependencyRefusal(r.cfg.TriggerPhrase, unmet)
	if r.cmd.runOptions().DryRun {
		r.refusedNote = reason
		return false, nil
	}
	return true, r.block(ctx, status.StepTaskParsed, reason)
}
