package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/proposal"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/prompts"
)

// runFlags are `studio run`'s flags: the seed's (§11) plus --write-file, the task's writeFiles.
type runFlags struct {
	task, project                   string
	printPrompt, dryRun             bool
	artifacts, writeFiles, scopes   []string
	allowBroadContext               bool
	verifyCommand                   string
	verifyArgs                      []string
	review, fix                     bool
	maxFixPasses                    int
	approvedByUser, constrainedSbox bool
	modelTier                       string

	// lifecycle is not a flag: what a run without --print-prompt or --dry-run is handed to.
	lifecycle localLifecycle
}

// LocalRun is what `studio run` without --print-prompt or --dry-run hands the local lifecycle:
// the parsed command line and the facts --print-prompt renders from, computed with the same
// policy decisions the action makes.
type LocalRun struct {
	Root               string // absolute project root
	Role               string
	Objective          string // --task, else the positional words joined by spaces
	IssueNumber        int    // when the objective is "12" or "#12"
	WriteFiles         []string
	Artifacts          []string
	ApprovalScope      []string
	Verify             []string // argv; nil without --verify-command
	Review, Fix        bool
	MaxFixPasses       int
	ApprovedByUser     bool
	ConstrainedSandbox bool
	ModelTier          string
	Facts              prompts.RunFacts
	Eligibility        policy.Eligibility
}

// localLifecycle runs `studio run` without --print-prompt or --dry-run: the same lifecycle as the
// action (Codex, verification, review, fix passes, gitops scope enforcement), run on the local
// checkout, committing in-scope work on a local branch and pushing nothing (issue #12). It prints
// the run summary and returns the exit code (0 done, 1 otherwise). runLocalLifecycle (locallife.go)
// is the real one; tests hand newRunCmd their own.
type localLifecycle func(ctx context.Context, run LocalRun, stdout, stderr io.Writer) int

const runLong = `Runs a task of <role> on a local checkout, with the action's own lifecycle: Codex,
verification, review (--review) and fix passes (--fix), scope enforcement by writeFiles
(--write-file). In-scope work is committed on a local branch (studio/local/task-<N>); nothing is
pushed, and the checkout is given back on its branch. The checkout must be clean, and Codex
needs OPENAI_API_KEY (CODEX_BIN names the CLI; OPENAI_BASE_URL another model API).

The objective is --task or, without it, the words after the role (joined by spaces); "12" or
"#12" names an issue instead (its text is not fetched locally). Flags may come anywhere on the
line; "--" ends them, so an objective may start with a dash.

--print-prompt prints the implementation prompt; --dry-run prints the decisions (eligibility,
model route), the context outcome and, with --review/--fix, the review and fix prompts. Neither
runs Codex or changes anything.`

// newRunCmd is `studio run`; lifecycle runs the task (nil: runLocalLifecycle, the real one).
func newRunCmd(e env, lifecycle localLifecycle) *cobra.Command {
	if lifecycle == nil {
		lifecycle = runLocalLifecycle
	}
	o := runFlags{lifecycle: lifecycle}
	cmd := &cobra.Command{
		Use:   "run <role> [objective...]",
		Short: "run a task on a local checkout (or print what Codex would get)",
		Long:  runLong,
		Example: `  studio run gameplay-programmer "Implement jump" --dry-run
  studio run producer --print-prompt Plan the first milestone
  studio run qa-playtester --task 12 --dry-run --review`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("a role is required (for example gameplay-programmer or producer)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			objective := joinWords(args[1:])
			if c.Flags().Changed("task") {
				objective = o.task // --task wins over the positional objective, as in the seed
			}
			return runLocal(c.Context(), e, args[0], objective, o)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.task, "task", "", "the objective, or an issue number (12 or #12); wins over the positional objective")
	f.StringVar(&o.project, "project", "", "project root (default $GITHUB_WORKSPACE, else the current directory)")
	f.BoolVar(&o.printPrompt, "print-prompt", false, "print the implementation prompt only")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the decisions, context and review/fix prompts without running Codex")
	f.StringArrayVar(&o.artifacts, "include-artifact", nil, "project file to embed in the prompt (repeatable)")
	f.StringArrayVar(&o.writeFiles, "write-file", nil, "path the run may commit, the task's writeFiles (repeatable)")
	f.StringArrayVar(&o.scopes, "approval-scope", nil, "approval scope of the task, part of what an approval approves (repeatable)")
	f.BoolVar(&o.allowBroadContext, "allow-broad-context", false, "add the broad reference documents")
	f.StringVar(&o.verifyCommand, "verify-command", "", "verification command (argv[0], run without a shell)")
	f.StringArrayVar(&o.verifyArgs, "verify-arg", nil, "verification argument (repeatable; needs --verify-command)")
	f.BoolVar(&o.review, "review", false, "also render the read-only review prompt")
	f.BoolVar(&o.fix, "fix", false, "also render the fix prompt")
	f.IntVar(&o.maxFixPasses, "max-fix-passes", 1, "fix passes (shown in the dry run)")
	f.BoolVar(&o.approvedByUser, "approved-by-user", false, "guided-studio override: write without a matching approval (provenance override)")
	f.BoolVar(&o.constrainedSbox, "constrained-sandbox", false, "writing roles run in Codex's workspace-write sandbox instead of danger-full-access")
	f.StringVar(&o.modelTier, "model-tier", "", "sol, terra or luna instead of the role's own model")
	return cmd
}

// runLocal renders (--print-prompt, --dry-run) or, through o.lifecycle, runs one task of
// role. Exit codes: 0 printed, 1 the run is refused (unknown role, wrong engine, bad project
// state), 2 usage.
func runLocal(ctx context.Context, e env, role, objective string, o runFlags) error {
	switch {
	case o.printPrompt && o.dryRun:
		return usagef("choose exactly one of --print-prompt or --dry-run, not both")
	case len(o.verifyArgs) > 0 && o.verifyCommand == "":
		return usagef("--verify-arg needs --verify-command")
	case o.modelTier != "" && o.modelTier != "sol" && o.modelTier != "terra" && o.modelTier != "luna":
		return usagef("--model-tier must be sol, terra or luna, not %q", o.modelTier)
	case o.maxFixPasses < 0:
		return usagef("--max-fix-passes must be 0 or more")
	}
	// Every mode checks the task as the run's task parser will, so a dry run refuses what the
	// run refuses, in the same words.
	if err := checkLocalTask(role, o); err != nil {
		return failf("%v", err)
	}
	root, err := projectRoot(o.project, e.getenv)
	if err != nil {
		return failf("%v", err)
	}
	facts, elig, err := localFacts(ctx, root, role, objective, o)
	if err != nil {
		return failf("%v", err)
	}
	if o.verifyCommand != "" {
		facts.Verification = append([]string{o.verifyCommand}, o.verifyArgs...)
	}
	facts.Artifacts, facts.WriteFiles = o.artifacts, o.writeFiles
	facts.AllowBroadContext, facts.Review, facts.Fix = o.allowBroadContext, o.review, o.fix && o.maxFixPasses > 0
	if !o.printPrompt && !o.dryRun {
		return exitWith(o.lifecycle(ctx, LocalRun{
			Root: root, Role: role, Objective: objective, IssueNumber: facts.IssueNumber, WriteFiles: o.writeFiles,
			Artifacts: o.artifacts, ApprovalScope: o.scopes, Verify: facts.Verification, Review: o.review, Fix: o.fix,
			MaxFixPasses: o.maxFixPasses, ApprovedByUser: o.approvedByUser, ConstrainedSandbox: o.constrainedSbox,
			ModelTier: o.modelTier, Facts: facts, Eligibility: elig,
		}, e.stdout, e.stderr))
	}
	p, err := prompts.Prepare(ctx, root, facts)
	if err != nil {
		return failf("%v", err)
	}
	if o.printPrompt {
		fmt.Fprintln(e.stdout, p.Prompt)
		return nil
	}
	cmds, err := localDryRunCommands(ctx, e, root, role, objective, facts, elig, o)
	if err != nil {
		return failf("%v", err)
	}
	fmt.Fprint(e.stdout, prompts.FormatDryRunWith(p, facts, roles.PromptEligibility(elig), o.maxFixPasses, cmds))
	return nil
}

// localDryRunCommands are the seed's dry-run lines (§9.2) for a local run: the argv of each Codex
// call as the lifecycle would start it (without the evidence paths and the studio's proxy
// provider, which exist only once it runs) and, outside fast-prototype, the approval diagnostic
// with the objective hash the run's task identity has (the lifecycle's issue title is the
// objective, its block the flags).
func localDryRunCommands(ctx context.Context, e env, root, role, objective string, facts prompts.RunFacts, elig policy.Eligibility, o runFlags) (prompts.DryRunCommands, error) {
	files := roles.DiskFiles(root)
	catalog, err := roles.Load(files)
	if err != nil {
		return prompts.DryRunCommands{}, err
	}
	routes, err := catalog.Route(role, files, roles.RouteInputs{ModelTier: o.modelTier})
	if err != nil {
		return prompts.DryRunCommands{}, err
	}
	bin := strings.TrimSpace(e.getenv("CODEX_BIN"))
	if bin == "" {
		bin = "codex"
	}
	show := func(choice routing.ModelChoice, sandbox string) string {
		if choice.Model == "" {
			return ""
		}
		return codex.Display(bin, codex.Args(codex.Request{Model: choice, Workdir: root, Sandbox: sandbox}, codex.ArgOptions{}))
	}
	sandbox := string(elig.CodexSandbox)
	c := prompts.DryRunCommands{
		Codex: show(routes.Implementation.Primary, sandbox), Fallback: show(routes.Implementation.Fallback, sandbox),
		ReviewCodex: show(routes.Review.Primary, "read-only"), ReviewFallback: show(routes.Review.Fallback, "read-only"),
		FixCodex: show(routes.Fix.Primary, sandbox), FixFallback: show(routes.Fix.Fallback, sandbox),
	}
	if c.Fallback == "" {
		c.Fallback = "none"
	}
	if elig.Input.StudioMode != policy.ModeFastPrototype {
		project := policy.StudioConfig{Mode: elig.Input.ProjectStage, StudioMode: elig.Input.StudioMode}
		match := policy.ApprovalMatch{}
		if hash, _, err := localObjectiveHash(role, objective, o, project); err == nil {
			match.CurrentHash = hash
			match = localApprovalMatch(ctx, root, match)
		}
		c.Diagnostic = policy.ApprovalDiagnostic{ProjectStage: elig.Input.ProjectStage, StudioMode: elig.Input.StudioMode, ApprovalScopes: o.scopes, Match: match}.Render()
	}
	return c, nil
}

// localApprovalMatch adds the checkout's local approval of match's hash (`studio approve`) as the
// authorizing decision it is; a checkout that is no git repository has none.
func localApprovalMatch(ctx context.Context, root string, match policy.ApprovalMatch) policy.ApprovalMatch {
	if rec, ok, err := localApprovalFor(ctx, root, match.CurrentHash); err == nil && ok {
		match.Decisions = append(match.Decisions, policy.ReviewDecision{Review: policy.Review{Author: rec.ApprovedBy, State: policy.ReviewApproved, SubmittedAt: rec.ApprovedAt}, Authorizing: true})
	}
	return match
}

// taskFlags names the flag that sets each task field, for refusals in the command line's terms.
var taskFlags = map[string]string{"writeFiles": "--write-file", "files": "--include-artifact", "approvalScope": "--approval-scope", "verify.command": "--verify-command"}

// checkLocalTask writes the flags as the task block the local run files (proposal.TaskBlock) and reads
// it back with the task parser the run uses (policy.ParseTask), so paths and the verification are
// checked by the same rules on every mode; a refusal names the flag, not a line of that block.
func checkLocalTask(role string, o runFlags) error {
	task := policy.Task{Role: role, WriteFiles: o.writeFiles, Files: o.artifacts, ApprovalScope: o.scopes}
	if o.verifyCommand != "" {
		task.Verify = &policy.Verification{Command: o.verifyCommand, Args: o.verifyArgs}
	}
	block, err := proposal.TaskBlock(task)
	if err != nil {
		return err
	}
	_, err = policy.ParseTask(block)
	var te *policy.TaskError
	if errors.As(err, &te) {
		if flag, ok := taskFlags[te.Field]; ok {
			return fmt.Errorf("%s %s", flag, te.Message)
		}
		return errors.New(te.Message)
	}
	return err
}

// localFacts gathers the run facts from the checkout through the action's own builder
// (roles.Catalog, roles.RunFacts): the same roles (custom ones included), phase, model route and
// refusal texts. A local run has no approvals, so only --approved-by-user lifts a guided block.
// projectInactive is why the checkout's project takes no mutating run, "" when it is active (or
// its studio.json cannot be read: loadProject has said so already).
func projectInactive(root string) string {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(policy.StudioConfigPath)))
	if err != nil {
		return ""
	}
	cfg, err := policy.ParseStudioConfig(data)
	if err != nil {
		return ""
	}
	return cfg.NotActiveReason()
}

func localFacts(ctx context.Context, root, role, task string, o runFlags) (prompts.RunFacts, policy.Eligibility, error) {
	project, err := loadProject(ctx, root)
	if err != nil {
		return prompts.RunFacts{}, policy.Eligibility{}, err
	}
	files := roles.DiskFiles(root)
	catalog, err := roles.Load(files)
	if err != nil {
		return prompts.RunFacts{}, policy.Eligibility{}, err
	}
	phase, ok := catalog.Lookup(role)
	if !ok {
		return prompts.RunFacts{}, policy.Eligibility{}, errors.New(catalog.UnknownRoleMessage(role))
	}
	issue, text := prompts.ParseTaskArg(task)
	if issue > 0 {
		text = fmt.Sprintf("Issue #%d (issue text is not fetched in a local run)", issue)
	}
	// A local approval (`studio approve`) of this task's identity counts as the review would.
	approved := false
	if project.StudioMode != policy.ModeFastPrototype {
		if hash, _, err := localObjectiveHash(role, task, o, project); err == nil {
			approved = localApprovalMatch(ctx, root, policy.ApprovalMatch{CurrentHash: hash}).HasMatchingApproval()
		}
	}
	elig := policy.Evaluate(policy.EligibilityInput{
		ProjectStage: project.Mode, StudioMode: project.StudioMode,
		Phase: phase, HasMatchingApproval: approved, ApprovedByUser: o.approvedByUser, ConstrainedSandbox: o.constrainedSbox,
		ProjectInactive: projectInactive(root),
	})
	routes, err := catalog.Route(role, files, roles.RouteInputs{ModelTier: o.modelTier})
	if err != nil {
		return prompts.RunFacts{}, policy.Eligibility{}, err
	}
	facts := roles.RunFacts(roles.FactsInput{
		Role: policy.ResolvedRole{ID: role, Phase: phase}, Eligibility: elig, Project: project, Routes: routes,
		Objective: text, Issue: issue,
	})
	return facts, elig, nil
}
