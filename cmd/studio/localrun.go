package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

const runUsage = "usage: studio run <role> [--task <issue-number-or-text>] [--project <dir>] (--print-prompt | --dry-run) [--review] [--fix] [--allow-broad-context] [--include-artifact <path>]... [--write-file <path>]... [--approved-by-user]"

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runLocal implements `studio run` in a local checkout: it renders exactly what the action would
// send to Codex, without GitHub and without running Codex. Exit codes: 0 printed, 1 the run is
// refused (unknown role, wrong engine, bad project state), 2 usage.
func runLocal(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	task := fs.String("task", "", "issue number (#12) or task text")
	project := fs.String("project", "", "project root (default $GITHUB_WORKSPACE, else the current directory)")
	printPrompt := fs.Bool("print-prompt", false, "print the implementation prompt only")
	dryRun := fs.Bool("dry-run", false, "print the decisions, context and review/fix prompts")
	review := fs.Bool("review", false, "also render the read-only review prompt")
	fix := fs.Bool("fix", false, "also render the fix prompt")
	broad := fs.Bool("allow-broad-context", false, "add the broad reference documents")
	approved := fs.Bool("approved-by-user", false, "guided-studio override (provenance override)")
	maxFix := fs.Int("max-fix-passes", 1, "fix passes shown in the dry run")
	var artifacts, writeFiles stringList
	fs.Var(&artifacts, "include-artifact", "project file to embed (repeatable)")
	fs.Var(&writeFiles, "write-file", "path the run may commit (repeatable)")

	// The role may come before or after the flags.
	var role string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		role, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if role == "" && fs.NArg() > 0 {
		role = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintln(stderr, runUsage)
		return 2
	}
	if role == "" || *printPrompt == *dryRun {
		fmt.Fprintln(stderr, runUsage)
		if role != "" {
			fmt.Fprintln(stderr, "studio run: choose exactly one of --print-prompt or --dry-run; only the action executes Codex")
		}
		return 2
	}
	root := *project
	if root == "" {
		root = getenv("GITHUB_WORKSPACE")
	}
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		fmt.Fprintf(stderr, "studio run: %v\n", err)
		return 1
	}
	facts, elig, err := localFacts(ctx, abs, role, *task, *approved)
	if err != nil {
		fmt.Fprintf(stderr, "studio run: %v\n", err)
		return 1
	}
	facts.Artifacts, facts.WriteFiles = artifacts, writeFiles
	facts.AllowBroadContext, facts.Review, facts.Fix = *broad, *review, *fix && *maxFix > 0
	p, err := prompts.Prepare(ctx, abs, facts)
	if err != nil {
		fmt.Fprintf(stderr, "studio run: %v\n", err)
		return 1
	}
	if *printPrompt {
		fmt.Fprintln(stdout, p.Prompt)
		return 0
	}
	fmt.Fprint(stdout, prompts.FormatDryRun(p, facts, elig, *maxFix))
	return 0
}

// localFacts gathers the run facts from the checkout with the same policy decisions the action
// makes (a local run has no approvals, so only --approved-by-user can lift a guided block).
func localFacts(ctx context.Context, root, role, task string, approvedByUser bool) (prompts.RunFacts, prompts.Eligibility, error) {
	project, err := prompts.LoadProject(ctx, root)
	if err != nil {
		return prompts.RunFacts{}, prompts.Eligibility{}, err
	}
	custom, err := prompts.ReadCustomization(ctx, root)
	if err != nil {
		return prompts.RunFacts{}, prompts.Eligibility{}, err
	}
	builtin, customRole, err := prompts.ResolveRoleID(custom, role)
	if err != nil {
		return prompts.RunFacts{}, prompts.Eligibility{}, err
	}
	phase := policy.PhaseForRole(role)
	if !builtin {
		phase = policy.Phase(customRole.Phase)
	}
	issue, text := prompts.ParseTaskArg(task)
	if issue > 0 {
		text = fmt.Sprintf("Issue #%d (issue text is not fetched in a local run)", issue)
	}
	elig := bot.PromptEligibility(policy.Evaluate(policy.EligibilityInput{
		ProjectStage: policy.ProjectStage(project.Stage), StudioMode: policy.StudioMode(project.StudioMode),
		Phase: phase, ApprovedByUser: approvedByUser,
	}))
	surface, err := prompts.RoleSurface(root, role)
	if !builtin {
		surface, _ = prompts.TierPrimary(customRole.ModelTier)
	}
	if err != nil && builtin {
		return prompts.RunFacts{}, prompts.Eligibility{}, err
	}
	routes, err := prompts.ResolveRoutes(surface, "")
	if err != nil {
		return prompts.RunFacts{}, prompts.Eligibility{}, err
	}
	facts := prompts.RunFacts{
		Role: role, Phase: string(phase), WritePolicy: elig.WritePolicy, Sandbox: elig.Sandbox, AllowFileEdits: elig.AllowFileEdits,
		Provenance: elig.Provenance, Objective: text, IssueNumber: issue, Project: project,
		Routes: routes.Display(),
	}
	return facts, elig, nil
}
