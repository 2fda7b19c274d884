package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// studioState is `.codex/studio.json` in the seed's key order (§1.2), so files written here and
// by the original runtime diff cleanly.
type studioState struct {
	SchemaVersion    int      `json:"schemaVersion"`
	Product          string   `json:"product"`
	Name             string   `json:"name"`
	Slug             string   `json:"slug"`
	Concept          string   `json:"concept"`
	Genre            string   `json:"genre"`
	Platform         string   `json:"platform"`
	Audience         string   `json:"audience"`
	Competitors      []string `json:"competitors"`
	Monetization     string   `json:"monetization"`
	Timeline         string   `json:"timeline"`
	Engine           string   `json:"engine"`
	EngineVersion    string   `json:"engineVersion"`
	Mode             string   `json:"mode"`
	StudioMode       string   `json:"studioMode"`
	Phase            string   `json:"phase"`
	Status           string   `json:"status"`
	CurrentMilestone string   `json:"currentMilestone"`
	Roles            []string `json:"roles"`
	ActiveRoles      []string `json:"activeRoles"`
	Workflows        []string `json:"workflows"`
}

var (
	engineAliases = map[string]string{
		"godot": "godot", "godot engine": "godot",
		"unity": "unity", "unity engine": "unity", "unity3d": "unity",
		"unreal": "unreal", "unreal engine": "unreal", "ue": "unreal", "ue5": "unreal", "ue4": "unreal",
	}
	engineVersions = map[string]string{"godot": "4.4.1", "unity": "6000.0", "unreal": "5.4"}
	nonSlug        = regexp.MustCompile(`[^a-z0-9]+`)
)

// runInit writes the studio's files into a checkout: `.codex/studio.json` (project state, as
// the seed's `init` does; starter documents and engine files are the project's own business here),
// the workflow (examples.Workflow) and the studio issue form. A file that exists is left as it is
// and listed as skipped unless --force. With --labels it also creates the studio's labels in the
// GitHub repository (initlabels.go). Everything comes from flags: init asks nothing.
func runInit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "project name")
	engineArg := fs.String("engine", "", "godot, unity or unreal")
	mode := fs.String("mode", "", "project stage: design, prototype or development")
	studioMode := fs.String("studio-mode", "guided-studio", "fast-prototype, guided-studio or strict-studio")
	nonInteractive := fs.Bool("non-interactive", false, "required: init asks nothing")
	var force bool
	fs.BoolVar(&force, "force", false, "replace files that exist (by default they are left as they are and listed as skipped)")
	fs.BoolVar(&force, "force-refresh", false, "the same as --force")
	project := fs.String("project", ".", "project root")
	labelPrefix := fs.String("label-prefix", "studio:", "the action's label-prefix input")
	labels := fs.Bool("labels", false, "also create the studio's labels in --repo (needs --token or GITHUB_TOKEN)")
	repoArg := fs.String("repo", "", "owner/name of the GitHub repository, for --labels (default $GITHUB_REPOSITORY)")
	token := fs.String("token", "", "GitHub token for --labels (default $GITHUB_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fail := func(msg string) int { fmt.Fprintln(stderr, "studio init: "+msg); return exitError }
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case !*nonInteractive:
		return fail("init requires --non-interactive")
	case *mode == "":
		return fail("init requires --mode")
	case strings.TrimSpace(*name) == "":
		return fail("init requires --name")
	}
	engine, ok := engineAliases[strings.ToLower(strings.TrimSpace(*engineArg))]
	if !ok {
		return fail(fmt.Sprintf("Unknown engine %q. Expected one of: godot, unity, unreal", *engineArg))
	}
	if !policy.ValidStage(policy.ProjectStage(*mode)) {
		return fail("studio.json mode must be design, prototype, or development")
	}
	if !policy.ValidMode(policy.StudioMode(*studioMode)) {
		return fail("studio.json studioMode must be fast-prototype, guided-studio, or strict-studio")
	}
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(*name), "-"), "-")
	if slug == "" {
		return fail(fmt.Sprintf("project name %q has no letters or digits to make a slug from", *name))
	}
	var target labelTarget
	if *labels {
		var err error
		if target, err = labelTargetFrom(*repoArg, *token, getenv); err != nil {
			return fail(err.Error())
		}
	}
	milestone := "prototype"
	if *mode == "design" || *mode == "development" {
		milestone = *mode
	}
	roles := prompts.RolesForEngine(engine)
	state := studioState{
		SchemaVersion: 1, Product: "codex-game-studio", Name: *name, Slug: slug, Concept: *name + " concept",
		Genre: "Unspecified", Platform: "PC", Audience: "General players", Competitors: []string{}, Monetization: "undecided",
		Timeline: "TBD", Engine: engine, EngineVersion: engineVersions[engine], Mode: *mode, StudioMode: *studioMode,
		Phase: "Initialization", Status: "active", CurrentMilestone: milestone,
		Roles: roles, ActiveRoles: prompts.ActiveRolesFor(*mode, engine), Workflows: []string{},
	}
	data, _ := json.MarshalIndent(state, "", "  ")
	files := []struct {
		path, note string
		data       []byte
	}{
		{policy.StudioConfigPath, fmt.Sprintf(" (%s, %s, %s)", engine, *mode, *studioMode), append(data, '\n')},
		{examples.WorkflowPath, "", examples.Workflow},
		{examples.IssueFormPath, "", examples.IssueForm(roles, *labelPrefix)},
	}
	var written []string
	for _, f := range files {
		path := filepath.Join(*project, filepath.FromSlash(f.path))
		if _, err := os.Lstat(path); err == nil && !force {
			fmt.Fprintf(stdout, "skipped %s: it exists (--force replaces it)\n", f.path)
			continue
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(err.Error())
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fail(err.Error())
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return fail(err.Error())
		}
		fmt.Fprintf(stdout, "wrote %s%s\n", f.path, f.note)
		written = append(written, f.path)
	}
	if *labels {
		if err := createLabels(ctx, target, studioLabels(*labelPrefix, roles), stdout, stderr); err != nil {
			return fail(err.Error())
		}
	}
	printNextSteps(stdout, written, *labels, *labelPrefix, *studioMode)
	return exitOK
}

// printNextSteps says what init cannot do: the secret, the Actions setting, the push, and
// opening the first task.
func printNextSteps(w io.Writer, written []string, labelsDone bool, labelPrefix, studioMode string) {
	fmt.Fprintln(w, "\nNext steps:")
	n := 0
	step := func(format string, args ...any) {
		n++
		fmt.Fprintf(w, "  %d. "+format+"\n", append([]any{n}, args...)...)
	}
	step("Add the repository secret OPENAI_API_KEY (Settings → Secrets and variables → Actions, or\n     `gh secret set OPENAI_API_KEY`).")
	step("Enable Settings → Actions → General → \"Allow GitHub Actions to create and approve pull\n     requests\" (the studio opens pull requests with the workflow token).")
	if len(written) > 0 {
		step("Commit and push to the default branch:\n       git add %s\n       git commit -m \"Set up Codex Studio\" && git push", strings.Join(written, " "))
	} else {
		step("Commit and push the studio's files to the default branch, if they are not there yet.")
	}
	if !labelsDone {
		step("Optionally create the studio's labels: rerun with --labels --repo OWNER/NAME and a token in\n     GITHUB_TOKEN (or --token).")
	}
	step("Open an issue from the \"Studio task\" form (Issues → New issue), then comment `/studio run`\n     on it (%srun as a label works too).", labelPrefix)
	// The first run's shape depends on the mode: say it, so nobody expects code and gets a plan.
	if studioMode == string(policy.ModeFastPrototype) {
		fmt.Fprintln(w, "\nstudioMode is fast-prototype: /studio run commits code straight away, with no approval.")
	} else {
		fmt.Fprintf(w, "\nstudioMode is %s: the first /studio run opens a draft pull request with a plan, and\napproving it starts the implementation (--studio-mode fast-prototype skips approvals).\n", studioMode)
	}
}
