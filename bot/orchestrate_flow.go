package bot

import (
	"context"
	"fmt"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// setIssueStatus moves another issue (a task of an orchestration) to status through the one
// transition function. A task that ends without running (skipped, blocked) gets its status
// comment, with the move and why in its history; a task starting gets only its label (its own
// run writes the comment).
func (b *eventBot) setIssueStatus(ctx context.Context, issue int, verdict, why string) error {
	is, err := b.gh.Issue(ctx, issue)
	if err != nil {
		return err
	}
	if verdict == policy.StatusRunning || verdict == policy.StatusReady {
		_, _, _, err := b.labels().Transition(ctx, issue, is.Labels, verdict)
		return err
	}
	r, err := b.runForIssue(ctx, Trigger{Kind: TriggerDispatch}, is, Command{Verb: "run"})
	if err != nil {
		return err
	}
	_, from, changed, err := b.labels().Transition(ctx, issue, is.Labels, verdict)
	if err != nil || !changed {
		return err
	}
	r.st.History = append(r.st.History, texts.StatusHistoryLine(b.cfg.Now(), from, verdict, b.cfg.RunID, why))
	r.st.Verdict, r.st.Ended = verdict, true
	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail(verdict))
	r.st.Summary = texts.StatusNote(verdict, why)
	return r.publish(ctx)
}

// graph is the event's task graph: its GitHub memo, the lock refs, the roles it read, and the
// status writer only the flow has.
func (b *eventBot) graph() *taskgraph.Graph {
	runs, _ := b.cfg.Locks.(lock.RunLookup)
	g := &taskgraph.Graph{GitHub: b.gh, Refs: b.cfg.Locks, Runs: runs, Roles: b.roles, SetStatus: b.setIssueStatus,
		LabelPrefix: b.cfg.LabelPrefix, BotLogin: b.cfg.BotLogin, RunID: b.cfg.RunID, RunURL: b.cfg.RunURL,
		DispatchWorkflow: b.cfg.DispatchWorkflow, Now: b.cfg.Now, Logf: b.cfg.logf}
	if b.cfg.RunsDir != "" {
		g.Evidence = func(orchestration int, file string, data []byte) error {
			ev, err := codex.NewEvidence(b.cfg.RunsDir, b.cfg.RunID, fmt.Sprintf("orchestration-%d", orchestration), b.cfg.Redactor)
			if err != nil {
				return err
			}
			return ev.Write(file, data)
		}
	}
	return g
}
