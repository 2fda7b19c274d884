package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/orgdefaults"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// One task context per task and event. What the default branch's configuration says, what the
// issue's task block says, which role it runs and what identity an approval must match are
// decided here, once, and carried as one value (taskContext) through the run, the approvals and
// the gate: no step decodes, parses or decides them again.

// taskContext is a task issue as this event decided it, with the configuration of the default
// branch. The identity hash an approval must still match is computed from it.
type taskContext struct {
	issue hub.Issue
	base  string
	// cfg is studio.json as decoded once; the prompts state the project from this same value.
	cfg  policy.StudioConfig
	task policy.Task
	hash string
	// hashErr is why hash could not be computed (problem says it too, for the gate).
	hashErr error
	// digest is policy.TaskDigest of the issue's title and body as read: an approval starts the
	// implementation only when it equals the digest the plan recorded.
	digest string
	// problem says why the task cannot be used now ("" when it can): no approval can match then.
	problem string
	// unscoped: the only problem is a writing role's block without writeFiles, which a run
	// proposes (proposal_flow.go).
	unscoped bool
	// elig is the run's eligibility once the run decided it (authorizeAndRun, implementApproved).
	elig policy.Eligibility
}

// derivations counts what an event decoded, parsed and decided, so a test can hold each to once.
type derivations struct {
	config    atomic.Int32 // studio.json decoded (one value: policy's config, the prompts' facts and the spend caps)
	taskBlock atomic.Int32 // a task block parsed
	role      atomic.Int32 // a task's role resolved
	hash      atomic.Int32 // an approval identity hashed
	approvals atomic.Int32 // a pull request's approvals matched
}

// derived holds what the event decided, each answer computed once (eventBot.derived).
type derived struct {
	mu      sync.Mutex
	configs map[string]*studioConfig // by default branch
	blocks  map[string]parsedBlock   // by issue body
	tasks   map[string]taskContext   // by taskKey
	count   derivations
}

// studioConfig is the default branch's studio.json as decoded once: missing when there is none,
// problem when it cannot be used.
type studioConfig struct {
	cfg     policy.StudioConfig
	missing bool
	err     error // why the file cannot be decoded or used
	problem string
}

// lookup and store are the caches' one locked access (the gate may decide beside the run).
func lookup[V any](d *derived, m *map[string]V, key string) (V, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := (*m)[key]
	return v, ok
}

func store[V any](d *derived, m *map[string]V, key string, v V) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = v
}

type parsedBlock struct {
	task policy.Task
	err  error
}

// config decodes the default branch's studio.json, once per event (the memo keeps the base's files
// across the lock, so the answer holds for the whole event).
func (b *eventBot) config(ctx context.Context, base string) (*studioConfig, error) {
	d := &b.derived
	if c, ok := lookup(d, &d.configs, base); ok {
		return c, nil
	}
	data, err := b.baseFile(ctx, policy.StudioConfigPath, base)
	c := &studioConfig{}
	switch {
	case errors.Is(err, hub.ErrNotFound):
		c.missing = true
		c.problem = policy.ErrNoStudioConfig.Error()
	case err != nil:
		return nil, err
	default:
		d.count.config.Add(1)
		if c.cfg, err = policy.ParseStudioConfig(data); err != nil {
			c.err = err
			c.problem = texts.FileOnBranch(policy.StudioConfigPath, base, err)
		} else if err := b.applyOrgDefaults(ctx, &c.cfg); err != nil {
			var ue *orgdefaults.UnusableError
			if !errors.As(err, &ue) {
				return nil, err
			}
			c.err, c.problem = err, err.Error()
		}
		// The prompts' facts and the spend caps are views of c.cfg; without the bytes nothing
		// after this can decode the file again.
		c.cfg.Raw = nil
	}
	store(d, &d.configs, base, c)
	return c, nil
}

// applyOrgDefaults fills what studio.json leaves unset from the organisation's defaults and says
// in the log what it took, so "why is the cap $20" has an answer in the run's own log.
func (b *eventBot) applyOrgDefaults(ctx context.Context, cfg *policy.StudioConfig) error {
	d, found, err := b.org.Defaults(ctx)
	if err != nil || !found {
		return err
	}
	where := b.org.Where(policy.OrgDefaultsPath)
	cfg.ApplyOrgDefaults(d, where)
	var took []string
	for _, s := range policy.EffectiveSettings(*cfg, policy.SettingInputs{}) {
		if s.Origin == policy.FromOrganisation {
			took = append(took, s.Key+" "+s.Value)
		}
	}
	if len(took) > 0 {
		b.cfg.logf("organisation defaults (%s): %s", where, strings.Join(took, "; "))
	}
	return nil
}

// taskBlock parses an issue body's task block, once per body and event (policy.ParseTask is
// pure). Callers get their own copy of the task.
func (b *eventBot) taskBlock(body string) (policy.Task, error) {
	d := &b.derived
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.blocks[body]
	if !ok {
		d.count.taskBlock.Add(1)
		p.task, p.err = policy.ParseTask(body)
		if d.blocks == nil {
			d.blocks = map[string]parsedBlock{}
		}
		d.blocks[body] = p
	}
	t := p.task
	t.WriteFiles, t.Files, t.DependsOn, t.ApprovalScope = slices.Clone(t.WriteFiles), slices.Clone(t.Files), slices.Clone(t.DependsOn), slices.Clone(t.ApprovalScope)
	return t, p.err
}

// taskKey is what a task context is decided from: the issue's text, its role labels and the
// default branch (whose files the memo keeps for the whole event).
func (b *eventBot) taskKey(issue hub.Issue, base, triggerLabel string) string {
	return strings.Join([]string{fmt.Sprint(issue.Number), base, issue.Title, issue.Body,
		strings.Join(policy.LabelRoles(b.cfg.LabelPrefix, issue.Labels, triggerLabel), ",")}, "\x00")
}

// taskOf decides the task of issue once per event: the default branch's configuration, the task
// block, its role (labels included, triggerLabel the event's own) and the approval identity. A
// task that cannot be used has problem set, the first of its problems.
func (b *eventBot) taskOf(ctx context.Context, issue hub.Issue, base, triggerLabel string) (taskContext, error) {
	key := b.taskKey(issue, base, triggerLabel)
	d := &b.derived
	if tc, ok := lookup(d, &d.tasks, key); ok {
		return tc, nil
	}
	tc := taskContext{issue: issue, base: base, digest: policy.TaskDigest(issue.Title, issue.Body)}
	sc, err := b.config(ctx, base)
	if err != nil {
		return tc, err
	}
	tc.cfg, tc.problem = sc.cfg, sc.problem
	if tc.problem == "" {
		if tc.task, err = b.taskBlock(issue.Body); err != nil {
			tc.problem = texts.TaskBlockUnusable(err)
		} else if role, err := b.resolveRole(ctx, tc.task, base, issue.Labels, triggerLabel); err != nil {
			tc.problem = err.Error()
			if policy.MissingWriteFiles(err) {
				tc.task.Role, tc.unscoped = role, true
			}
		} else {
			tc.task.Role = role
			b.identify(&tc)
		}
	}
	store(d, &d.tasks, key, tc)
	return tc, nil
}

// identify computes the task's approval identity (policy.ObjectiveHash of policy.TaskIdentity).
func (b *eventBot) identify(tc *taskContext) {
	b.derived.count.hash.Add(1)
	if tc.hash, tc.hashErr = policy.ObjectiveHash(policy.TaskIdentity(tc.task.Role, tc.issue.Title, tc.task, tc.cfg)); tc.hashErr != nil {
		tc.problem = tc.hashErr.Error()
	}
}

// loadTask is the task issue number as it stands now, with the configuration of the default
// branch: the issue as the event's memo has it (read after the lock) and the task decided from it
// (taskOf, so a run's gate takes the run's own decisions). Configuration and roles come from the
// default branch, never from a pull request's head.
func (b *eventBot) loadTask(ctx context.Context, number int) (taskContext, error) {
	issue, err := b.gh.Issue(ctx, number)
	if err != nil {
		return taskContext{}, fmt.Errorf("read task issue #%d: %w", number, err)
	}
	base, err := b.gh.DefaultBranch(ctx)
	if err != nil {
		return taskContext{issue: issue}, err
	}
	return b.taskOf(ctx, issue, base, "")
}
