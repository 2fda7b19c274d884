package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/suggest"
	"github.com/codex-studio/studio-action/prompts"
)

// The seed's read-only project commands (§11): status, resume, templates and context. None of
// them writes anything; validate (validate.go) and docs-impact (docsimpact.go) are the checks.

// projectOpened is what every project command reads first: the root, studio.json and the pack.
type projectOpened struct {
	root    string
	project policy.StudioConfig
	cfg     policy.StudioConfig
	custom  prompts.Customization
}

func openProject(ctx context.Context, e env, project string) (projectOpened, error) {
	root, err := projectRoot(project, e.getenv)
	if err != nil {
		return projectOpened{}, failf("%v", err)
	}
	p, err := loadProject(ctx, root)
	if err != nil {
		return projectOpened{}, failf("%v", err)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(policy.StudioConfigPath)))
	if err != nil {
		return projectOpened{}, failf("%v", err)
	}
	cfg, err := policy.ParseStudioConfig(data)
	if err != nil {
		return projectOpened{}, failf("%v", err)
	}
	custom, err := prompts.ReadCustomization(ctx, root)
	if err != nil {
		return projectOpened{}, failf("%v", err)
	}
	return projectOpened{root: root, project: p, cfg: cfg, custom: custom}, nil
}

func newStatusCmd(e env) *cobra.Command {
	var project string
	c := &cobra.Command{
		Use:   "status",
		Short: "summarize the project: stage, phase, modes, engine, roles, workflows, the pack, and its workflow phase's next steps",
		Long: `Prints the project's state from .codex/studio.json and the customization pack, then its place in
the workflow catalog: the first of the phases concept, systems-design, pre-production, production
and release with a step that is not complete, that phase's steps (workflow, role, complete,
incomplete or missing, and the document the step writes), each phase's count, and how to run the
next step. It reads only; nothing is written.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := openProject(c.Context(), e, project)
			if err != nil {
				return err
			}
			return printStatus(e.stdout, p)
		},
	}
	c.Flags().StringVar(&project, "project", "", "project root (default $GITHUB_WORKSPACE, then .)")
	return inProjectGroup(c)
}

// printStatus prints the project's state, then its place in the workflow catalog (the seed's
// workflow catalog summary: its phase, the phase's steps, how to run the next one).
func printStatus(w io.Writer, p projectOpened) error {
	line := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	line("Project: %s", orDefault(p.project.Name, "unnamed"))
	line("Stage: %s", p.cfg.Mode)
	// studio.json's phase is the project's own word for where it stands ("Initialization" from
	// init); as in the seed it is shown, never acted on.
	line("Phase: %s", orDefault(p.cfg.Phase, "unset"))
	line("Status: %s", orDefault(p.cfg.Status, "active"))
	line("Studio mode: %s", p.cfg.StudioMode)
	line("Engine: %s", orDefault(strings.TrimSpace(p.project.Engine+" "+p.project.EngineVersion), "unspecified"))
	if p.project.CurrentMilestone != "" {
		line("Milestone: %s", p.project.CurrentMilestone)
	}
	roles := p.cfg.Roles
	if len(roles) == 0 {
		roles = prompts.RolesForEngine(p.project.Engine)
	}
	line("Roles: %d", len(roles))
	line("Active roles: %s", orDefault(strings.Join(p.cfg.ActiveRoles, ", "), "none listed"))
	line("Workflows: %d built-in, %d custom", len(prompts.BuiltinWorkflows()), len(p.custom.Workflows))
	line("Custom pack: %d roles, %d workflows, %d templates", len(p.custom.Roles), len(p.custom.Workflows), len(p.custom.Templates))
	if p.cfg.Status == "frozen" {
		line("The project is frozen: the action starts no implementation until its status is active again.")
	}
	catalog, err := prompts.ReadCatalogStatus(projectDocs(p.root))
	if err != nil {
		return failf("workflow catalog: %v", err)
	}
	printCatalog(w, catalog)
	line("Next: `studio resume` suggests a summary run; `studio validate` checks every studio file.")
	return nil
}

// printCatalog is the workflow catalog summary: the phase, the state of each of its steps with
// the step's document, every phase's count, and how to run the phase's first unfinished step.
func printCatalog(w io.Writer, st prompts.CatalogStatus) {
	line := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	cur := st.Current()
	if st.Done {
		line("Workflow phase: %s (every step of the five phases is complete)", st.Phase)
		line("Required next steps: none")
	} else {
		line("Workflow phase: %s (%s)", st.Phase, cur.Goal)
		line("Required next steps:")
		for _, s := range cur.Steps {
			doc := s.Document
			if s.Reason != "" {
				doc += ": " + s.Reason
			}
			line("  - %s (%s): %s (%s)", s.Workflow, s.Role, s.State, doc)
		}
	}
	counts := make([]string, len(st.Phases))
	for i, p := range st.Phases {
		counts[i] = fmt.Sprintf("%s %d/%d", p.ID, p.Done(), len(p.Steps))
	}
	line("Workflow catalog: %s steps complete", strings.Join(counts, ", "))
	if next, ok := st.NextStep(); ok {
		line("Run the next step: comment `/studio workflow %s` on an issue whose `studio` block has `writeFiles: [%s]` (`studio workflow %s` prints its prompt).",
			next.Workflow, next.Document, next.Workflow)
	}
}

// projectDocs reads a catalog document of the checkout at root; anything but a regular file
// (a directory, a socket) counts as absent, as a document cannot be one.
func projectDocs(root string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		name := filepath.Join(root, filepath.FromSlash(p))
		info, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			return nil, fs.ErrNotExist
		}
		return os.ReadFile(name)
	}
}

func newResumeCmd(e env) *cobra.Command {
	var project string
	c := &cobra.Command{
		Use:   "resume",
		Short: "print the command that summarizes where the project stands (read-only)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := openProject(c.Context(), e, project)
			if err != nil {
				return err
			}
			if err := printStatus(e.stdout, p); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\nTo pick the work up, ask the producer for a summary:\n  studio run producer --project %s \"Summarize current project state\"\n", shellWord(p.root))
			return nil
		},
	}
	c.Flags().StringVar(&project, "project", "", "project root (default $GITHUB_WORKSPACE, then .)")
	return inProjectGroup(c)
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newTemplatesCmd(e env) *cobra.Command {
	var project string
	c := &cobra.Command{
		Use:   "templates list|show <id>",
		Short: "list the document templates, or print one",
		Args:  subcommandArgs,
	}
	c.PersistentFlags().StringVar(&project, "project", "", "project root (default $GITHUB_WORKSPACE, then .)")
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "list the built-in templates and the project's own",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			custom, _, err := readPack(c.Context(), e, project)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSOURCE\tROLES")
			for _, id := range prompts.BuiltinTemplateIDs() {
				fmt.Fprintf(tw, "%s\tbuilt-in\t%s\n", id, orDefault(strings.Join(prompts.TemplateDefaultRoles(id), ", "), "by task wording"))
			}
			for _, t := range custom.Templates {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, t.Path, orDefault(strings.Join(t.Roles, ", "), "by tag"))
			}
			return tw.Flush()
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "show <id>",
		Short: "print a template (the project's own first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			custom, root, err := readPack(c.Context(), e, project)
			if err != nil {
				return err
			}
			id := args[0]
			if t, ok, err := prompts.ProjectTemplate(c.Context(), root, custom, id); ok {
				if err != nil {
					return failf("template %s: %v", id, err)
				}
				fmt.Fprint(e.stdout, t.Body)
				return nil
			}
			t, err := prompts.BuiltinTemplate(id)
			if err != nil {
				names := prompts.BuiltinTemplateIDs()
				for _, t := range custom.Templates {
					names = append(names, t.ID)
				}
				return failf("unknown template %q (studio templates list shows them).%s", id, suggest.DidYouMean(suggest.Closest(id, names)))
			}
			fmt.Fprint(e.stdout, t.Body)
			return nil
		},
	})
	return inProjectGroup(c)
}

func readPack(ctx context.Context, e env, project string) (prompts.Customization, string, error) {
	root, err := projectRoot(project, e.getenv)
	if err != nil {
		return prompts.Customization{}, "", failf("%v", err)
	}
	custom, err := prompts.ReadCustomization(ctx, root)
	if err != nil {
		return prompts.Customization{}, "", failf("%v", err)
	}
	return custom, root, nil
}

// newContextCmd is `studio context` and its subcommands (studio, role, workflow, task, changed):
// one constructor, so the subcommands share the --project flag and its resolution; its length is
// the five subcommands' definitions side by side.
func newContextCmd(e env) *cobra.Command {
	var project string
	c := &cobra.Command{
		Use:   "context studio|role <id>|workflow <id>|task <words...>|changed",
		Short: "short summaries for an agent or a person: the studio, a role, a workflow, what fits a task",
		Args:  subcommandArgs,
	}
	c.PersistentFlags().StringVar(&project, "project", "", "project root (default $GITHUB_WORKSPACE, then .)")
	c.AddCommand(&cobra.Command{
		Use: "studio", Short: "the project and the context every run starts from", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := openProject(c.Context(), e, project)
			if err != nil {
				return err
			}
			if err := printStatus(e.stdout, p); err != nil {
				return err
			}
			sel, err := prompts.SelectContext(c.Context(), p.root, prompts.StudioContextRequests(p.project.Engine), prompts.DefaultBudget())
			if err != nil {
				return failf("%v", err)
			}
			fmt.Fprintln(e.stdout, "Context every run starts from:")
			for _, s := range sel.Selected {
				fmt.Fprintf(e.stdout, "- %s\n", s)
			}
			for _, o := range sel.Omissions() {
				fmt.Fprintf(e.stdout, "- %s: %s (%s)\n", o.SourcePath, o.Status, o.StatusReason)
			}
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "role <id>", Short: "a role: phase, model, context strategy, expected outputs", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			root, err := projectRoot(project, e.getenv)
			if err != nil {
				return failf("%v", err)
			}
			files := roles.DiskFiles(root)
			catalog, err := roles.Load(files)
			if err != nil {
				return failf("%v", err)
			}
			phase, ok := catalog.Lookup(args[0])
			if !ok {
				return failf("%s", catalog.UnknownRoleMessage(args[0]))
			}
			routes, err := catalog.Route(args[0], files, roles.RouteInputs{})
			if err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(e.stdout, "Role: %s\nPhase: %s\nWrites: %t\nModel: %s (%s), fallback %s\n", args[0], phase, phase.Mutating(),
				routes.Implementation.Primary.Model, routes.Implementation.Primary.Effort, orDefault(routes.Implementation.Fallback.Model, "none"))
			if r, ok := prompts.LookupRole(args[0]); ok {
				fmt.Fprintf(e.stdout, "Context strategy: %s\nExpected outputs: %s\n", r.ContextStrategy, strings.Join(r.ExpectedOutputs, "; "))
			}
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "workflow <id>", Short: "a workflow: role, phase, model, objective, context files", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			custom, _, err := readPack(c.Context(), e, project)
			if err != nil {
				return err
			}
			w, ok := prompts.FindWorkflow(custom, args[0])
			if !ok {
				return failf("%s (studio workflow list shows them).%s", prompts.UnknownWorkflowMessage(args[0]), suggest.DidYouMean(suggest.Closest(args[0], workflowNames(custom))))
			}
			fmt.Fprintf(e.stdout, "Workflow: %s\nRole: %s\nPhase: %s\nModel: %s\nObjective: %s\nContext files: %s\nTemplates: %s\n", w.ID, w.Role, w.Phase,
				surfaceText(w.Surface()), w.Objective, orDefault(strings.Join(append([]string{"AGENTS.md", policy.StudioConfigPath, w.File}, w.ContextFiles...), ", "), "none"),
				orDefault(strings.Join(w.TemplateIDs, ", "), "none"))
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "task <words...>", Short: "the workflows, roles and templates whose words a task shares, best first", Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			custom, _, err := readPack(c.Context(), e, project)
			if err != nil {
				return err
			}
			printTaskMatches(e.stdout, custom, strings.Join(args, " "))
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "changed", Short: "the checkout's changed files (uncommitted and untracked) and which are functional", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := projectRoot(project, e.getenv)
			if err != nil {
				return failf("%v", err)
			}
			out, err := localGit(c.Context(), root, "status", "--porcelain", "--untracked-files=all")
			if err != nil {
				return failf("%v", err)
			}
			if out == "" {
				fmt.Fprintln(e.stdout, "Changed: none")
				return nil
			}
			fmt.Fprintln(e.stdout, "Changed:")
			for _, l := range strings.Split(out, "\n") {
				// localGit trims the output, so the first line may have lost its leading blank:
				// the code is the first word, the path the rest.
				l = strings.TrimSpace(l)
				code, path, ok := strings.Cut(l, " ")
				if !ok {
					continue
				}
				path = strings.TrimSpace(path)
				if _, to, ok := strings.Cut(path, " -> "); ok {
					path = to
				}
				note := ""
				if functionalChange(path) {
					note = " (functional: docs-impact asks for its documentation impact)"
				}
				fmt.Fprintf(e.stdout, "- %s %s%s\n", code, path, note)
			}
			return nil
		},
	})
	return inProjectGroup(c)
}

// printTaskMatches ranks workflows, roles and templates by the words they share with the task
// (the seed's token overlap), at most five of each, ties in registry order.
func printTaskMatches(w io.Writer, custom prompts.Customization, task string) {
	words := tokens(task)
	type hit struct {
		name  string
		score int
	}
	rank := func(cands []hit) []hit {
		var out []hit
		for _, c := range cands {
			if c.score > 0 {
				out = append(out, c)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
		if len(out) > 5 {
			out = out[:5]
		}
		return out
	}
	score := func(text string) int {
		n := 0
		for t := range tokens(text) {
			if words[t] {
				n++
			}
		}
		return n
	}
	var wfs, roles, tpls []hit
	for _, wf := range prompts.BuiltinWorkflows() {
		wfs = append(wfs, hit{wf.ID, score(wf.ID + " " + wf.Objective + " " + strings.Join(wf.GapCoverage, " "))})
	}
	for _, wf := range custom.Workflows {
		wfs = append(wfs, hit{wf.ID, score(wf.ID + " " + wf.Objective)})
	}
	for _, id := range prompts.BuiltinRoleIDs() {
		r, _ := prompts.LookupRole(id)
		roles = append(roles, hit{id, score(id + " " + r.DisplayName + " " + strings.Join(r.ExpectedOutputs, " "))})
	}
	for _, id := range prompts.BuiltinTemplateIDs() {
		tpls = append(tpls, hit{id, score(strings.ReplaceAll(id, "_", " "))})
	}
	for _, t := range custom.Templates {
		tpls = append(tpls, hit{t.ID, score(t.ID + " " + t.Description + " " + strings.Join(t.Tags, " "))})
	}
	for _, group := range []struct {
		label string
		hits  []hit
	}{{"Workflows", rank(wfs)}, {"Roles", rank(roles)}, {"Templates", rank(tpls)}} {
		names := make([]string, len(group.hits))
		for i, h := range group.hits {
			names[i] = h.name
		}
		fmt.Fprintf(w, "%s: %s\n", group.label, orDefault(strings.Join(names, ", "), "none share a word with the task"))
	}
}

// tokens are the lower-cased words of s longer than two letters, split on anything else.
func tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if len(f) > 2 {
			out[f] = true
		}
	}
	return out
}

func newRefreshContextCmd(e env) *cobra.Command {
	var project string
	c := &cobra.Command{
		Use:   "refresh-context",
		Short: "rewrite .codex/context-manifest.json and its meta: what every run's default context selects",
		Long: `Writes the seed's context manifest: the studio's default context requests and what they select
now, with a meta file of hashes that "studio validate" checks for freshness. Runs never read it:
each selects its context afresh (the seed's quirk A.15). Commit it to review what runs start from.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := openProject(c.Context(), e, project)
			if err != nil {
				return err
			}
			manifest, meta, err := prompts.BuildContextManifest(c.Context(), p.root, p.project)
			if err != nil {
				return failf("%v", err)
			}
			for _, f := range []struct {
				path string
				data []byte
			}{{prompts.ContextManifestPath, manifest}, {prompts.ContextManifestMetaPath, meta}} {
				if err := os.WriteFile(filepath.Join(p.root, filepath.FromSlash(f.path)), f.data, 0o644); err != nil {
					return failf("%v", err)
				}
				fmt.Fprintf(e.stdout, "wrote %s\n", f.path)
			}
			return nil
		},
	}
	c.Flags().StringVar(&project, "project", "", "project root (default $GITHUB_WORKSPACE, then .)")
	return inProjectGroup(c)
}
