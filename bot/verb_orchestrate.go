package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// `/studio orchestrate [#N ...] [--workflow W] [--max-concurrency N] [--dry-run]` on any issue
// (and a workflow_dispatch with the same inputs) starts an orchestration of task issues there
// (orchestrate.go); on an issue whose orchestration is still running, without tasks named, it
// resumes it.

// OrchestrateOptions are `orchestrate`'s (taskgraph.ParseOrchestrateFlags).
type OrchestrateOptions = taskgraph.OrchestrateOptions

func parseOrchestrateOptions(args []string) (any, error) {
	return taskgraph.ParseOrchestrateFlags(args)
}

// issueRef reads `#12` or `12`.
var issueRef = taskgraph.IssueRef

func init() {
	register(&verb{
		name: "orchestrate", order: 27, served: always, args: "[#N ...]", flags: []string{"--workflow W", "--max-concurrency N", "--dry-run"}, where: "on any issue",
		what:    "runs task issues as a graph: the named tasks (else a workflow's, else every ready task), each in its own workflow run as its dependencies finish, at most N at once (1 to 3) and never two writing the same file; `--dry-run` shows the plan, its waves and the approvals; on an issue whose orchestration is running it resumes it",
		parse:   parseOrchestrateOptions,
		onIssue: func(ctx context.Context, r *run) error { return r.orchestrate(ctx) },
	})
}

func (r *run) orchestrate(ctx context.Context) error {
	opts, _ := r.cmd.Opts.(OrchestrateOptions)
	out, err := r.ev.orchestrateOn(ctx, r.tr.Issue, opts, r.tr.CommentID, r.tr.Actor.Login, r.cmd.Line)
	*r.out = out
	return err
}

// orchestrateOn starts (or resumes) the orchestration on issue; it runs under issue's lock. It
// reads the graph, answers a dry run, refuses a graph policy rejects, then starts the first wave;
// those four answers share the tracking comment and the plan, which is why they stay together.
func (b *eventBot) orchestrateOn(ctx context.Context, issue int, opts OrchestrateOptions, commentID int64, actor, line string) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID}
	reply := func(status, text string) (Outcome, error) {
		out.Status, out.Summary = status, text
		_, err := b.gh.CreateComment(ctx, issue, texts.OrchestrationReply(line, actor, text))
		return out, err
	}
	base, err := b.gh.DefaultBranch(ctx)
	if err != nil {
		return out, err
	}
	comment, st, err := b.graph().Tracking(ctx, issue)
	if err != nil {
		return out, err
	}
	if st != nil && commentID != 0 && status.ContainsID(st.Handled, commentID) {
		return b.cfg.skip(fmt.Sprintf("comment %d was already handled (re-delivered event)", commentID))
	}
	o := &taskgraph.Orchestration{Graph: b.graph(), Base: base, Comment: comment}
	if sc, err := b.config(ctx, base); err == nil && sc.problem == "" {
		cfg := sc.cfg
		o.Cfg = &cfg
		if !cfg.Active() && !opts.DryRun {
			return reply("refused", texts.RefusedNote(cfg.InactiveReason()))
		}
	}
	resume := st != nil && st.Status == "running" && len(opts.Tasks) == 0 && opts.Workflow == "" && !opts.DryRun
	if !resume {
		if err := policy.CheckMaxConcurrency(max(opts.MaxConcurrency, 1)); err != nil {
			return reply("refused", texts.OrchestrationRefused(err.Error()))
		}
		tasks, err := b.graph().Tasks(ctx, base, opts.Tasks)
		if err != nil {
			return out, err
		}
		req := policy.OrchestrateRequest{Explicit: opts.Tasks, Workflow: opts.Workflow, MaxConcurrency: opts.MaxConcurrency, DryRun: opts.DryRun}
		plan, err := policy.PlanOrchestration(tasks, req)
		if err != nil {
			return reply("refused", texts.OrchestrationCannotStart(err.Error()))
		}
		o.Tasks = tasks
		if opts.DryRun {
			return reply("done", texts.OrchestrationDryRun(policy.RenderPlanWith(plan, b.dryRunDetails(ctx, o))))
		}
		if len(plan.Tasks) == 0 {
			return reply("done", texts.NothingToOrchestrate(b.cfg.LabelPrefix))
		}
		prev := st
		st = &taskgraph.State{Issue: issue, Max: plan.MaxConcurrency, Run: b.cfg.RunID, Status: "running", Pulls: map[string]int{}, Runs: map[string]string{}}
		for _, t := range plan.Tasks {
			st.Tasks = append(st.Tasks, t.Issue)
		}
		if prev != nil {
			st.Handled, st.Notes = prev.Handled, prev.Notes
			if prev.Status == "running" {
				// The earlier orchestration of this issue goes on: its tasks stay tracked beside
				// the new ones (a second delegation, or tasks named while it runs).
				for _, n := range prev.Tasks {
					if !slices.Contains(st.Tasks, n) {
						st.Tasks = append(st.Tasks, n)
					}
				}
				st.Pulls, st.Runs, st.Run, st.Marks, st.RunIDs, st.Said = prev.Pulls, prev.Runs, prev.Run, prev.Marks, prev.RunIDs, prev.Said
			}
		}
	}
	o.State = st
	for n, m := range opts.Marks {
		if st.Marks == nil {
			st.Marks = map[string]string{}
		}
		st.Marks[strconv.Itoa(n)] = m
	}
	if commentID != 0 {
		st.Handled = append(st.Handled, commentID)
	}
	if resume {
		o.Event("orchestration.resumed", map[string]any{"selectedTaskIds": st.Tasks, "maxConcurrency": st.Max})
	} else {
		o.Event("orchestration.started", map[string]any{"selectedTaskIds": st.Tasks, "maxConcurrency": st.Max})
	}
	defer o.WriteEvidence()
	advErr := o.Advance(ctx)
	if err := o.Publish(ctx); err != nil {
		return out, err
	}
	out.Status = "done"
	if st.Status == "blocked" {
		out.Status = "blocked"
	}
	out.Summary = taskgraph.RenderTracking(st, o.Tasks, b.cfg.RunURL)
	return out, advErr
}

// runDispatchedTask is a task run an orchestration dispatched: `/studio run` on the task issue,
// then its refs given back and the orchestration advanced, whatever the run's end (a run that
// failed after its locks were taken releases them too; one killed outright leaves them to expire).
func (b *eventBot) runDispatchedTask(ctx context.Context, tr Trigger) (Outcome, error) {
	task, ok := issueRef(tr.Inputs["task"])
	if !ok {
		return b.cfg.skip(fmt.Sprintf("workflow_dispatch input task %q is not an issue number", tr.Inputs["task"]))
	}
	orch, _ := issueRef(tr.Inputs["orchestration"])
	slot := -1
	if n, err := strconv.Atoi(tr.Inputs["slot"]); err == nil && n >= 0 {
		slot = n
	}
	issue, err := b.gh.Issue(ctx, task)
	if err != nil {
		return Outcome{RunID: b.cfg.RunID}, fmt.Errorf("read task #%d: %w", task, err)
	}
	line := "dispatched run"
	if orch > 0 {
		line = fmt.Sprintf("orchestration #%d", orch)
	}
	cmd := Command{Verb: "run", Line: line, Opts: RunOptions{}}
	out, runErr := b.locked(ctx, task, eventLine(tr, cmd), tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
		r, err := b.runForIssue(ctx, tr, issue, cmd)
		if err != nil {
			return Outcome{RunID: b.cfg.RunID}, err
		}
		r.st.Set(status.StepAuthorized, status.StepDone, texts.DispatchedDetail(line, tr.Actor.Login))
		if err := r.execute(ctx); err != nil {
			r.reportFailure(ctx, err)
			return *r.out, err
		}
		return *r.out, nil
	})
	if orch > 0 {
		if err := b.finishOrchestrated(context.WithoutCancel(ctx), orch, task, slot, out); err != nil {
			b.cfg.logf("::warning::orchestration #%d was not advanced: %v", orch, err)
			if runErr == nil {
				runErr = err
			}
		}
	}
	return out, runErr
}

// finishOrchestrated gives back a finished task's refs and advances its orchestration.
func (b *eventBot) finishOrchestrated(ctx context.Context, orch, task, slot int, out Outcome) error {
	base, err := b.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	is, err := b.gh.IssueNow(ctx, task)
	if err != nil {
		return err
	}
	t := b.graph().Task(ctx, base, is)
	var released []string
	for _, key := range t.LockKeys() {
		if ok, err := b.graph().Release(ctx, policy.LockRef(key), task); err != nil {
			return err
		} else if ok {
			released = append(released, key)
		}
	}
	if slot >= 0 {
		if _, err := b.graph().Release(ctx, policy.SlotRef(slot), task); err != nil {
			return err
		}
	}
	if _, err := b.graph().Release(ctx, taskgraph.ClaimRef(task), task); err != nil {
		return err
	}
	_, err = b.locked(ctx, orch, fmt.Sprintf("orchestration #%d: #%d finished", orch, task), "", func(ctx context.Context) (Outcome, error) {
		comment, st, err := b.graph().Tracking(ctx, orch)
		if err != nil || st == nil {
			if err == nil {
				b.cfg.logf("::warning::#%d names orchestration #%d, which has no tracking comment", task, orch)
			}
			return Outcome{}, err
		}
		o := &taskgraph.Orchestration{Graph: b.graph(), Base: base, State: st, Comment: comment}
		defer o.WriteEvidence()
		if st.Runs == nil {
			st.Runs = map[string]string{}
		}
		if st.Pulls == nil {
			st.Pulls = map[string]int{}
		}
		if b.cfg.RunURL != "" {
			st.Runs[strconv.Itoa(task)] = b.cfg.RunURL
		}
		if out.PullRequest > 0 {
			st.Pulls[strconv.Itoa(task)] = out.PullRequest
		}
		if said := strings.TrimSpace(out.Said); said != "" {
			if st.Said == nil {
				st.Said = map[string]string{}
			}
			st.Said[strconv.Itoa(task)] = texts.OneLine(b.cfg.Redactor.Redact(said), 160)
		}
		locks := released
		if locks == nil {
			locks = []string{}
		}
		o.Event("task.unlocked", map[string]any{"taskId": task, "locks": locks, "slot": slot})
		o.Event("task.finished", map[string]any{"taskId": task, "status": texts.OrDefault(out.Status, "error")})
		advErr := o.Advance(ctx)
		if err := o.Publish(ctx); err != nil {
			return Outcome{}, err
		}
		return Outcome{}, advErr
	})
	return err
}

// onDispatch handles workflow_dispatch: an orchestration's task run (input task), or an
// orchestration started from the Actions tab (input orchestrate, on the issue named by input
// issue). GitHub lets only writers dispatch a workflow; a person's dispatch is checked anyway.
func (b *eventBot) onDispatch(ctx context.Context, tr Trigger) (Outcome, error) {
	if tr.Inputs[inputActor] != "" { // a command `studio serve` dispatched (serve_mode.go)
		return b.onServedDispatch(ctx, tr)
	}
	if !strings.EqualFold(tr.Actor.Login, b.cfg.BotLogin) {
		perm, err := b.gh.Permission(ctx, tr.Actor.Login)
		if err != nil {
			return Outcome{RunID: b.cfg.RunID}, fmt.Errorf("authorize %s: %w", tr.Actor.Login, err)
		}
		if !policy.ParsePermission(perm).CanWrite() {
			return Outcome{RunID: b.cfg.RunID, Status: "refused", Skip: tr.Actor.Login + " may not dispatch studio runs"}, nil
		}
	}
	switch {
	case tr.Inputs["task"] != "":
		return b.runDispatchedTask(ctx, tr)
	case tr.Inputs["orchestrate"] != "":
		issue, ok := issueRef(tr.Inputs["issue"])
		if !ok {
			return b.cfg.skip("workflow_dispatch input issue must name the issue that tracks the orchestration (`#N`)")
		}
		args := strings.Fields(tr.Inputs["orchestrate"])
		if len(args) == 1 && (args[0] == "ready" || args[0] == "all") {
			args = nil
		}
		if w := tr.Inputs["workflow-id"]; w != "" {
			args = append(args, "--workflow", w)
		}
		if m := tr.Inputs["max-concurrency"]; m != "" {
			args = append(args, "--max-concurrency", m)
		}
		if tr.Inputs["dry-run"] == "true" {
			args = append(args, "--dry-run")
		}
		parsed, err := parseOrchestrateOptions(args)
		line := "workflow_dispatch orchestrate " + strings.Join(args, " ")
		if err != nil {
			_, cerr := b.gh.CreateComment(ctx, issue, texts.OrchestrationReply(line, tr.Actor.Login, texts.OrchestrationInputsRefused(err.Error())))
			return Outcome{RunID: b.cfg.RunID, Status: "refused"}, cerr
		}
		return b.locked(ctx, issue, eventLine(tr, Command{Line: line}), tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
			return b.orchestrateOn(ctx, issue, parsed.(OrchestrateOptions), 0, tr.Actor.Login, line)
		})
	}
	return b.cfg.skip("workflow_dispatch without a task or orchestrate input")
}
