package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/policy/suggest"
	"github.com/codex-studio/studio-action/prompts"
)

// workflowFlags are the flags every workflow command takes (seed §11: --project --dry-run).
type workflowFlags struct {
	project string
	dryRun  bool
}

func (w *workflowFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&w.project, "project", "", "project root (default $GITHUB_WORKSPACE, else the current directory)")
	// The seed's alias commands take --dry-run; they only ever render, so it adds what a run of the
	// workflow would route to and changes nothing else.
	fs.BoolVar(&w.dryRun, "dry-run", false, "also print the model and effort a run of the workflow routes to (workflow commands only print)")
}

const workflowLong = `Prints the prompt of a workflow: its role's session with the workflow's objective and phase, the
context contract, the workflow's instructions and its templates. Nothing runs.

<id> is a built-in workflow's id or alias ("studio workflow list" shows them) or a custom
workflow's id or alias from .codex/studio/config.json. "render" is the default subcommand:
"studio workflow market" and "studio workflow render market" are the same.`

func newWorkflowCmd(e env) *cobra.Command {
	var wf workflowFlags
	cmd := &cobra.Command{
		Use:   "workflow [render] <id>",
		Short: "print a workflow's prompt (built-in or custom, by id or alias)",
		Long:  workflowLong,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] == "render" || len(args) == 0 {
				return usagef("a workflow id is required (studio workflow list shows them)")
			}
			if len(args) > 2 || len(args) == 2 && args[0] != "render" {
				return usagef("one workflow id, optionally after render")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return renderWorkflowCmd(c.Context(), e, args[len(args)-1], wf)
		},
	}
	wf.bind(cmd.PersistentFlags()) // `workflow list --project P` too
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "list the built-in workflows and the project's custom ones",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return listWorkflows(c.Context(), e, wf)
		},
	})
	return cmd
}

// newWorkflowAliasCmds makes one command per built-in workflow with aliases (the seed's cliAlias,
// with cliAliases as cobra aliases: `studio start` and `studio onboard` are one command), plus
// `review` and `ship-check`, which render the workflows of those ids.
func newWorkflowAliasCmds(e env) []*cobra.Command {
	var cmds []*cobra.Command
	add := func(use string, aliases []string, w prompts.Workflow) {
		var wf workflowFlags
		c := &cobra.Command{
			Use:     use,
			Aliases: aliases,
			Short:   fmt.Sprintf("%s (%s, %s)", w.ID, w.Role, w.Phase),
			Long:    fmt.Sprintf("Prints the prompt of the %s workflow: %s\n\nRole %s, phase %s, model %s. Nothing runs.", w.ID, w.Objective, w.Role, w.Phase, surfaceText(w.Surface())),
			Args:    cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				return renderWorkflowCmd(c.Context(), e, w.ID, wf)
			},
		}
		wf.bind(c.Flags())
		cmds = append(cmds, c)
	}
	for _, w := range prompts.BuiltinWorkflows() {
		switch {
		case w.ID == "review" || w.ID == "ship-check":
			add(w.ID, nil, w)
		case len(w.Aliases) > 0:
			add(w.Aliases[0], w.Aliases[1:], w)
		}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name() < cmds[j].Name() })
	return cmds
}

// renderWorkflowCmd prints the prompt of workflow name in the project: exit 1 for a project or
// workflow that does not resolve.
func renderWorkflowCmd(ctx context.Context, e env, name string, wf workflowFlags) error {
	root, err := projectRoot(wf.project, e.getenv)
	if err != nil {
		return failf("%v", err)
	}
	project, err := loadProject(ctx, root)
	if err != nil {
		return failf("%v", err)
	}
	custom, err := prompts.ReadCustomization(ctx, root)
	if err != nil {
		return failf("%v", err)
	}
	w, ok := prompts.FindWorkflow(custom, name)
	if !ok {
		return failf("%s (studio workflow list shows them).%s", prompts.UnknownWorkflowMessage(name), suggest.DidYouMean(suggest.Closest(name, workflowNames(custom))))
	}
	// The workflow's phase decides its write policy, with no approval: a render states what a run
	// of the workflow would be allowed before anyone approved it.
	elig := policy.Evaluate(policy.EligibilityInput{ProjectStage: project.Mode,
		StudioMode: project.StudioMode, Phase: policy.Phase(w.Phase)})
	out, err := prompts.RenderWorkflow(ctx, root, custom, w, prompts.WorkflowFacts{Project: project,
		WritePolicy: string(elig.WritePolicy), Sandbox: string(elig.CodexSandbox), AllowFileEdits: elig.AllowFileEdits})
	if err != nil {
		return failf("%v", err)
	}
	if wf.dryRun {
		line, err := workflowRouteLine(root, w)
		if err != nil {
			return failf("%v", err)
		}
		fmt.Fprintln(e.stdout, line+"\n")
	}
	fmt.Fprintln(e.stdout, out)
	return nil
}

// workflowRouteLine says what a run of workflow w routes to, resolved as the run resolves it
// (roles.Catalog.RouteForTask: the workflow's surface, the project's profile binding and tiers).
func workflowRouteLine(root string, w prompts.Workflow) (string, error) {
	files := roles.DiskFiles(root)
	catalog, err := roles.Load(files)
	if err != nil {
		return "", err
	}
	plan, err := catalog.RouteForTask(policy.Task{Role: w.Role, WorkflowID: w.ID}, files, roles.RouteInputs{})
	if err != nil {
		return "", err
	}
	show := func(r routing.Route) string {
		d := prompts.DisplayRoute(r)
		return fmt.Sprintf("%s at %s effort", d.Model, d.Effort)
	}
	d := prompts.DisplayRoute(plan.Implementation)
	return fmt.Sprintf("Dry run: a run of %s (role %s) routes to %s (tier %s, source %s, fallback %s); its review to %s, its fixes to %s. Nothing runs.",
		w.ID, w.Role, show(plan.Implementation), d.Tier, d.Source, d.FallbackModel, show(plan.Review), show(plan.Fix)), nil
}

// workflowNames are the words `studio workflow` takes: list, render, and every workflow's id and
// aliases, built-in and custom.
func workflowNames(custom prompts.Customization) []string {
	names := []string{"list", "render"}
	for _, w := range prompts.BuiltinWorkflows() {
		names = append(append(names, w.ID), w.Aliases...)
	}
	for _, w := range custom.Workflows {
		names = append(append(names, w.ID), w.Aliases...)
	}
	return names
}

// listWorkflows prints one line per workflow: id, role, phase, the names that reach it and,
// for custom ones, where they come from. The project is read only for its custom workflows.
func listWorkflows(ctx context.Context, e env, wf workflowFlags) error {
	root, err := projectRoot(wf.project, e.getenv)
	if err != nil {
		return failf("%v", err)
	}
	custom, err := prompts.ReadCustomization(ctx, root)
	if err != nil {
		return failf("%v", err)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	// MODEL is what a run of the workflow uses: a task with this workflowId takes it over its role's.
	fmt.Fprintln(tw, "ID\tROLE\tPHASE\tMODEL\tCOMMAND")
	for _, w := range prompts.BuiltinWorkflows() {
		command := "studio workflow " + w.ID
		switch {
		case w.ID == "review" || w.ID == "ship-check":
			command = "studio " + w.ID
		case len(w.Aliases) > 0:
			command = "studio " + strings.Join(w.Aliases, ", studio ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, w.Role, w.Phase, surfaceText(w.Surface()), command)
	}
	for _, w := range custom.Workflows {
		names := append([]string{w.ID}, w.Aliases...)
		model := prompts.Workflow{Custom: true, ModelTier: w.ModelTier}.Surface()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tstudio workflow %s (%s)\n", w.ID, w.Role, w.Phase, surfaceText(model), strings.Join(names, ", studio workflow "), prompts.CustomizationPath)
	}
	return tw.Flush()
}

// surfaceText is a model surface as the CLI shows it: `gpt-5.6-luna (low)`.
func surfaceText(c routing.ModelChoice) string { return fmt.Sprintf("%s (%s)", c.Model, c.Effort) }
