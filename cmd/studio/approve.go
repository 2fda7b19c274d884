package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// A local approval is the local form of the approving review of a plan pull request: it binds
// the same objective hash (policy.ObjectiveHash of the task's identity: role, objective,
// writeFiles, approval scopes, stage and mode) and names who approved it. It is kept in the
// checkout's git directory, never in the work tree: it is not committed, and the clean-checkout
// check of a local run does not see it.

// localApproval is one record of <git dir>/studio/approvals.json.
type localApproval struct {
	ID              string    `json:"id"` // local-approval-NNN
	ObjectiveSHA256 string    `json:"objectiveSha256"`
	Role            string    `json:"role"`
	Objective       string    `json:"objective"`
	ApprovedBy      string    `json:"approvedBy"`
	ApprovedAt      time.Time `json:"approvedAt"`
	// RevokedAt is set once by `studio approval revoke`; the record is kept as history (the
	// seed's revokedAt) and no longer authorizes.
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// state is the seed's `approval list` state: revoked, else the stage (a local record is always
// approved: it has no expiry).
func (a localApproval) state() string {
	if a.RevokedAt != nil {
		return "revoked"
	}
	return "approved"
}

// localApprovalsPath is the store of the checkout at root: inside its git directory.
func localApprovalsPath(ctx context.Context, root string) (string, error) {
	dir, err := localGit(ctx, root, "rev-parse", "--absolute-git-dir")
	if err != nil || dir == "" {
		return "", fmt.Errorf("%s is not a git checkout; local approvals are kept in its git directory: %v", root, err)
	}
	return filepath.Join(dir, "studio", "approvals.json"), nil
}

func readLocalApprovals(ctx context.Context, root string) ([]localApproval, error) {
	p, err := localApprovalsPath(ctx, root)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []localApproval
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	return out, nil
}

// localObjectiveHash is the objective hash a local run of role with these flags has: the
// lifecycle's issue title is the objective ("Issue #N" for an issue number) and its task block
// the flags, exactly as the bot computes it on that issue.
func localObjectiveHash(role, objective string, o runFlags, project policy.StudioConfig) (string, string, error) {
	title := objective
	if issue, _ := prompts.ParseTaskArg(objective); issue > 0 {
		title = fmt.Sprintf("Issue #%d", issue)
	}
	cfg := policy.StudioConfig{Mode: project.Mode, StudioMode: project.StudioMode}
	task := policy.Task{Role: role, WriteFiles: o.writeFiles, Files: o.artifacts, ApprovalScope: o.scopes}
	hash, err := policy.ObjectiveHash(policy.TaskIdentity(role, title, task, cfg))
	return hash, title, err
}

func writeLocalApprovals(ctx context.Context, root string, records []localApproval) (string, error) {
	path, err := localApprovalsPath(ctx, root)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(records, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// localApprovalFor is the authorizing (not revoked) approval recorded for hash, if any.
func localApprovalFor(ctx context.Context, root, hash string) (localApproval, bool, error) {
	records, err := readLocalApprovals(ctx, root)
	if err != nil {
		return localApproval{}, false, err
	}
	for _, r := range records {
		if r.RevokedAt == nil && strings.EqualFold(r.ObjectiveSHA256, hash) {
			return r, true, nil
		}
	}
	return localApproval{}, false, nil
}

func newApproveCmd(e env) *cobra.Command {
	var o runFlags
	var approvedBy string
	cmd := &cobra.Command{
		Use:   "approve <role> [objective...]",
		Short: "approve a local task for implementation (strict and guided studio modes)",
		Long: `Records the local approval of a task: the local form of an approving review of its plan pull
request. It binds the task's objective hash (the role, the objective, --write-file and
--approval-scope, the stage and studio mode): give the same words and flags the run takes, and
the next "studio run" of that task implements it. Any change to them needs a new approval, as on
GitHub. The record is kept in the checkout's git directory and never committed; "studio approval
list" lists the records and "studio approval revoke <id>" revokes one.`,
		Example: `  studio approve gameplay-programmer "Implement jump" --write-file src/player/jump.gd`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("a role is required (the role the run takes)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			objective := joinWords(args[1:])
			if c.Flags().Changed("task") {
				objective = o.task
			}
			return approveLocal(c.Context(), e, args[0], objective, approvedBy, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.task, "task", "", "the objective, or an issue number; wins over the positional objective")
	f.StringVar(&o.project, "project", "", "project root (default $GITHUB_WORKSPACE, else the current directory)")
	f.StringArrayVar(&o.writeFiles, "write-file", nil, "the task's writeFiles, as the run gives them (repeatable)")
	f.StringArrayVar(&o.artifacts, "include-artifact", nil, "as the run gives them (repeatable; not part of the approval)")
	f.StringArrayVar(&o.scopes, "approval-scope", nil, "the task's approval scopes, as the run gives them (repeatable)")
	f.StringVar(&approvedBy, "approved-by", "", "who approves (default git's user.name, then the OS user)")
	return inProjectGroup(cmd)
}

func approveLocal(ctx context.Context, e env, role, objective, approvedBy string, o runFlags) error {
	if strings.TrimSpace(objective) == "" {
		return usagef("an objective is required: the words the run takes, or --task")
	}
	if err := checkLocalTask(role, o); err != nil {
		return failf("%v", err)
	}
	root, err := projectRoot(o.project, e.getenv)
	if err != nil {
		return failf("%v", err)
	}
	project, err := loadProject(ctx, root)
	if err != nil {
		return failf("%v", err)
	}
	if _, _, err := localFacts(ctx, root, role, objective, o); err != nil {
		return failf("%v", err)
	}
	if project.StudioMode == policy.ModeFastPrototype {
		return failf("the project is in fast-prototype mode: runs need no approval, so nothing was recorded")
	}
	hash, title, err := localObjectiveHash(role, objective, o, project)
	if err != nil {
		return failf("the task's approval identity cannot be computed: %v", err)
	}
	if approvedBy = strings.TrimSpace(approvedBy); approvedBy == "" {
		approvedBy = localUser(ctx, root)
	}
	records, err := readLocalApprovals(ctx, root)
	if err != nil {
		return failf("%v", err)
	}
	if r, ok, err := localApprovalFor(ctx, root, hash); err == nil && ok {
		fmt.Fprintf(e.stdout, "Already approved: %s by %s (objective hash %s).\n", r.ID, r.ApprovedBy, hash)
		return nil
	}
	// Revoked records stay, so ids are never reused.
	rec := localApproval{ID: fmt.Sprintf("local-approval-%03d", len(records)+1), ObjectiveSHA256: hash, Role: role, Objective: title,
		ApprovedBy: approvedBy, ApprovedAt: time.Now().UTC().Truncate(time.Second)}
	path, err := writeLocalApprovals(ctx, root, append(records, rec))
	if err != nil {
		return failf("%v", err)
	}
	fmt.Fprintf(e.stdout, "Approved: %s by %s, objective hash %s (%s).\nThe next `studio run %s` with the same objective and flags implements it.\n", rec.ID, approvedBy, hash, path, role)
	return nil
}

// localUser names the local approver: git's user.name, else the OS user, else local-user (the
// seed's fallback).
func localUser(ctx context.Context, root string) string {
	if name, err := localGit(ctx, root, "config", "user.name"); err == nil && strings.TrimSpace(name) != "" {
		return strings.TrimSpace(name)
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "local-user"
}

// newApprovalCmd is the seed's `approval list|revoke` for the local records `studio approve`
// makes (its `grant` is `studio approve`, which binds the run's objective hash).
func newApprovalCmd(e env) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "approval",
		Short: "list or revoke the local approvals `studio approve` recorded",
		Long: `Lists the local approvals of the checkout (.git/studio/approvals.json), one a line as the
seed's "approval list": id, state (approved or revoked), authorizing or non-authorizing, role,
who approved it and when, the revocation date, the objective hash and the objective. "revoke"
marks one revoked: it is kept as history and no longer authorizes a run; approve the task again
to record a new one.`,
		Example: `  studio approval list
  studio approval revoke local-approval-001`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usagef("name a sub-command: list or revoke <approval-id>")
		},
	}
	cmd.PersistentFlags().StringVar(&project, "project", "", "project root (default $GITHUB_WORKSPACE, else the current directory)")
	list := &cobra.Command{
		Use:   "list",
		Short: "list the local approvals",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := projectRoot(project, e.getenv)
			if err != nil {
				return failf("%v", err)
			}
			records, err := readLocalApprovals(c.Context(), root)
			if err != nil {
				return failf("%v", err)
			}
			if len(records) == 0 {
				fmt.Fprintln(e.stdout, "No local approvals (studio approve records one).")
				return nil
			}
			for _, r := range records {
				fmt.Fprintln(e.stdout, approvalLine(r))
			}
			return nil
		},
	}
	var id string
	revoke := &cobra.Command{
		Use:   "revoke <approval-id>",
		Short: "revoke a local approval (it is kept as history)",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 || len(args) == 1 && c.Flags().Changed("approval-id") {
				return usagef("name one approval id")
			}
			if len(args) == 0 && !c.Flags().Changed("approval-id") {
				return usagef("an approval id is required (studio approval list names them)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				id = args[0]
			}
			return revokeLocal(c.Context(), e, project, strings.TrimSpace(id))
		},
	}
	revoke.Flags().StringVar(&id, "approval-id", "", "the approval id (the seed's flag; or give it as the argument)")
	cmd.AddCommand(list, revoke)
	return inProjectGroup(cmd)
}

// approvalLine is one record as the seed's `approval list` shows it: id, state, whether it
// authorizes, then the details, tab-separated. The objective (the user's words) comes last.
func approvalLine(r localApproval) string {
	auth, revoked := "authorizing", "not revoked"
	if r.RevokedAt != nil {
		auth, revoked = "non-authorizing", "revoked "+r.RevokedAt.UTC().Format(time.RFC3339)
	}
	return strings.Join([]string{r.ID, r.state(), auth, r.Role, "by " + r.ApprovedBy + " " + r.ApprovedAt.UTC().Format(time.RFC3339),
		revoked, "objective hash " + r.ObjectiveSHA256, strconv.Quote(r.Objective)}, "\t")
}

func revokeLocal(ctx context.Context, e env, project, id string) error {
	root, err := projectRoot(project, e.getenv)
	if err != nil {
		return failf("%v", err)
	}
	records, err := readLocalApprovals(ctx, root)
	if err != nil {
		return failf("%v", err)
	}
	for i, r := range records {
		if r.ID != id {
			continue
		}
		if r.RevokedAt != nil {
			fmt.Fprintf(e.stdout, "Already revoked: %s on %s.\n", r.ID, r.RevokedAt.UTC().Format(time.RFC3339))
			return nil
		}
		now := time.Now().UTC().Truncate(time.Second)
		records[i].RevokedAt = &now
		if _, err := writeLocalApprovals(ctx, root, records); err != nil {
			return failf("%v", err)
		}
		fmt.Fprintf(e.stdout, "Revoked: %s (%s, objective hash %s). A run of that task needs a new approval.\n", r.ID, r.Role, r.ObjectiveSHA256)
		return nil
	}
	return failf("no local approval %q (studio approval list names them)", id)
}
