package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// `/studio task create --role R [--file F]... [--write-file F]... [--depends-on #N]...
// [--priority P] [--verify-command C [--verify-arg A]...] <title words>` on any issue opens a
// task issue (taskcreate.go) and answers with its number. The CLI's `studio task create` takes
// the same flags.

// TaskOptions are `task`'s: the subcommand (only `create`) and the task to create.
type TaskOptions struct {
	Sub  string
	Task policy.NewTask
}

func parseTaskOptions(args []string) (any, error) {
	if len(args) == 0 {
		return nil, errors.New(texts.TaskNeedsSubcommand)
	}
	if !strings.EqualFold(args[0], "create") {
		return nil, errors.New(texts.NotATaskSubcommand(args[0]))
	}
	t, err := taskgraph.ParseTaskFlags(args[1:])
	if err != nil {
		return nil, err
	}
	return TaskOptions{Sub: "create", Task: t}, nil
}

func init() {
	register(&verb{
		name: "task", order: 17, served: always, args: "create --role <role> <title>",
		flags: []string{"--file <path>", "--write-file <path>", "--depends-on #N", "--priority <n>", "--verify-command <cmd>", "--verify-arg <arg>"},
		where: "on any issue",
		what:  "opens a task issue: the title, a `studio` task block from the flags (each repeatable but `--role` and `--priority`; dependencies must be existing issues), and the labels of a ready task of that role. It does not start a run",
		parse: parseTaskOptions,
		// No checkout: the roles are read from the default branch through the API (baseFile).
		onIssue: func(ctx context.Context, r *run) error { return r.taskCreate(ctx) },
	})
}

// taskCreate is `/studio task create`: it creates the task and replies on the issue it was typed
// on with the new task's number, or with why nothing was created.
func (r *run) taskCreate(ctx context.Context) error {
	o, _ := r.cmd.Opts.(TaskOptions)
	creator, err := r.taskCreator(ctx)
	if err != nil {
		return r.taskReply(ctx, err, nil)
	}
	is, t, err := creator.Create(ctx, o.Task)
	if err != nil {
		return r.taskReply(ctx, err, nil)
	}
	r.cfg.logf("created task #%d (%s) from #%d", is.Number, t.Role, r.tr.Issue)
	r.st.Set(status.StepTaskParsed, status.StepDone, texts.TaskCreatedDetail(is.Number, t.Role))
	return r.taskReply(ctx, nil, func() string {
		return texts.TaskCreatedReply(r.cfg.TriggerPhrase, is.Number, t, r.ev.phaseOf(t.Role).Mutating())
	})
}

// taskCreator is the creator of this run: the default branch must hold a valid studio
// configuration, and its roles are the ones a task may name.
func (r *run) taskCreator(ctx context.Context) (*taskgraph.TaskCreator, error) {
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return nil, err
	}
	// The event's one decode of studio.json (config), as a run's.
	sc, err := r.ev.config(ctx, base)
	if err != nil {
		return nil, err
	}
	if err := taskgraph.ConfigRefusal(sc.missing, sc.err); err != nil {
		return nil, err
	}
	roles, err := r.ev.roles(ctx, base)
	if err != nil { // the customization file cannot be used, as a run would say
		return nil, &taskgraph.TaskRefusal{Msg: err.Error()}
	}
	return taskgraph.NewTaskCreator(r.ev.gh, r.cfg.LabelPrefix, roles), nil
}

// taskReply answers a task or recipe command: the reply quoting the command, then the status
// comment with the same words. err is a refusal (replied, status refused) or a failure of the
// studio (returned for the preamble to report); done renders the reply when nothing failed.
func (r *run) taskReply(ctx context.Context, err error, done func() string) error {
	var refusal *taskgraph.TaskRefusal
	verdict, what := "done", ""
	switch {
	case errors.As(err, &refusal):
		verdict, what = "refused", texts.TaskRefusedReply(refusal.Msg)
		r.st.Set(status.StepTaskParsed, status.StepFailed, texts.DetailNothingCreated)
	case err != nil:
		return err
	default:
		what = done()
	}
	r.st.Set(status.StepCodex, status.StepSkipped, texts.DetailTasksStartNoRun)
	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail(verdict))
	reply := texts.CommandReply(r.cmd.Line, r.tr.Actor.Login, what)
	if _, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, reply); err != nil {
		return err
	}
	r.st.Summary = texts.VerbSummary(r.cfg.TriggerPhrase, r.cmd.Verb, r.tr.Actor.Login, what)
	r.out.Status, r.out.Summary = verdict, r.st.Summary
	return r.publish(ctx)
}
