package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/suggest"
	"github.com/codex-studio/studio-action/prompts"
)

var (
	engineAliases = map[string]string{
		"godot": "godot", "godot engine": "godot",
		"unity": "unity", "unity engine": "unity", "unity3d": "unity",
		"unreal": "unreal", "unreal engine": "unreal", "ue": "unreal", "ue5": "unreal", "ue4": "unreal",
	}
	engineVersions = map[string]string{"godot": "4.4.1", "unity": "6000.0", "unreal": "5.4"}
	nonSlug        = regexp.MustCompile(`[^a-z0-9]+`)
)

// initStudioMode is the studioMode `studio init` writes unless told otherwise, and so the mode
// `studio demo` shows: a team's first run is the one the demo played for them.
const initStudioMode = policy.ModeGuidedStudio

// initOptions are `studio init`'s flags: the seed's (§11 `init`/`new`) plus the GitHub side.
type initOptions struct {
	name, engine, mode, studioMode                             string
	concept, genre, platform, audience, monetization, timeline string
	engineVersion                                              string
	competitors                                                []string
	nonInteractive, force, keepTemplateAuthoring, full, serve  bool
	project, labelPrefix, repo, token                          string
	labels                                                     bool
}

// initStdin and initStdinIsTerminal are how init asks before replacing a file; tests replace them.
var (
	initStdin           io.Reader = os.Stdin
	initStdinIsTerminal           = stdinIsTerminal
)

// stdinIsTerminal reports whether stdin is a terminal: /dev/null is a character device too, so
// the mode bits cannot tell (init asked "Replace it?" there, once per existing file).
func stdinIsTerminal() bool { return term.IsTerminal(int(os.Stdin.Fd())) }

const initLong = `Writes what a team must own into a checkout: .codex/studio.json (the project file),
AGENTS.md (the project's instructions to every role), the workflow
(.github/workflows/studio.yml) and the Studio task issue form. Every role runs with the model,
effort and contract built into studio until the team adds its own .codex/agents/<role>.toml.

--full writes the whole layout instead: also .codex/studio/config.json (the customization pack),
one .codex/agents/<role>.toml per role of the project, stubs under
docs/engine-reference/<engine>/, the starter documents (design/gdd.md, production/timeline.md,
docs/architecture/README.md, docs/market-overview.md) and the context manifest.
With --labels init also creates the studio's labels. With --serve the workflow is the one a
repository served by a studio serve GitHub App needs: started only by the server's dispatches,
writing as the App.

Flags alone are enough. A file that exists is never replaced silently: in a terminal init asks
for each one; otherwise (or with --non-interactive) it is kept and listed as skipped, and
--force replaces it. The customization pack is never replaced, as in the seed.`

func newInitCmd(e env) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:     "init --name N --engine E --mode M",
		Aliases: []string{"new"},
		Short:   "write the studio's files into a checkout (project file, AGENTS.md, workflow, issue form)",
		Long:    initLong,
		Example: `  studio init --name Hop --engine godot --mode prototype
  studio init --name Hop --engine godot --mode prototype --studio-mode fast-prototype --labels --repo acme/hop
  studio init --name Hop --engine godot --mode prototype --full`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runInit(c.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.name, "name", "", "project name (required)")
	f.StringVar(&o.engine, "engine", "", "godot, unity or unreal (required; aliases such as ue5 work)")
	f.StringVar(&o.mode, "mode", "", "project stage: design, prototype or development (required)")
	f.StringVar(&o.studioMode, "studio-mode", string(initStudioMode), "fast-prototype, guided-studio or strict-studio")
	f.StringVar(&o.concept, "concept", "", `project concept (default "<name> concept")`)
	f.StringVar(&o.genre, "genre", "Unspecified", "genre")
	f.StringVar(&o.platform, "platform", "PC", "platform")
	f.StringVar(&o.audience, "audience", "General players", "audience")
	f.StringArrayVar(&o.competitors, "competitor", nil, "competitor name (repeatable)")
	f.StringVar(&o.monetization, "monetization", "undecided", "monetization model")
	f.StringVar(&o.timeline, "timeline", "TBD", "timeline")
	f.StringVar(&o.engineVersion, "engine-version", "", "engine version (default the engine's: godot 4.4.1, unity 6000.0, unreal 5.4)")
	f.BoolVar(&o.full, "full", false, "write the whole layout: role files, engine notes, starter documents, customization pack, context manifest")
	f.BoolVar(&o.serve, "serve", false, "write the workflow of a repository a studio serve App serves: only workflow_dispatch, the App's id and key (docs/serve.md)")
	f.BoolVar(&o.force, "force", false, "replace files that exist (except the customization pack)")
	f.BoolVar(&o.force, "force-refresh", false, "the same as --force (the seed's name)")
	f.BoolVar(&o.nonInteractive, "non-interactive", false, "never ask: keep existing files unless --force (init needs no answers otherwise)")
	f.BoolVar(&o.keepTemplateAuthoring, "keep-template-authoring", false, "accepted for the seed's command lines; init prunes nothing here")
	_ = f.MarkHidden("keep-template-authoring")
	f.StringVar(&o.project, "project", ".", "project root")
	f.StringVar(&o.labelPrefix, "label-prefix", "studio:", "the action's label-prefix input")
	f.BoolVar(&o.labels, "labels", false, "also create the studio's labels in --repo (needs --token or GITHUB_TOKEN)")
	f.StringVar(&o.repo, "repo", "", "owner/name of the GitHub repository, for --labels (default $GITHUB_REPOSITORY)")
	f.StringVar(&o.token, "token", "", "GitHub token for --labels (default $GITHUB_TOKEN)")
	return cmd
}

// initFlagProblems lists every mistake on init's command line at once, each naming its flag:
// the missing required flags on one line, then each wrong value with what it may be.
func initFlagProblems(o initOptions) []string {
	var missing, out []string
	if strings.TrimSpace(o.name) == "" {
		missing = append(missing, "--name")
	}
	if strings.TrimSpace(o.engine) == "" {
		missing = append(missing, "--engine (godot, unity or unreal)")
	}
	if strings.TrimSpace(o.mode) == "" {
		missing = append(missing, "--mode (design, prototype or development)")
	}
	if len(missing) > 0 {
		out = append(out, "missing "+joinAnd(missing))
	}
	engines := []string{"godot", "unity", "unreal"}
	if e := strings.TrimSpace(o.engine); e != "" {
		if _, ok := engineAliases[strings.ToLower(e)]; !ok {
			out = append(out, fmt.Sprintf("--engine %q is not an engine the studio knows: godot, unity or unreal (ue5 and the like work too).%s", o.engine, didYouMean(e, engines)))
		}
	}
	if o.mode != "" && !policy.ValidStage(policy.ProjectStage(o.mode)) {
		out = append(out, fmt.Sprintf("--mode %q must be design, prototype or development.%s", o.mode, didYouMean(o.mode, []string{"design", "prototype", "development"})))
	}
	if !policy.ValidMode(policy.StudioMode(o.studioMode)) {
		out = append(out, fmt.Sprintf("--studio-mode %q must be fast-prototype, guided-studio or strict-studio.%s", o.studioMode, didYouMean(o.studioMode, []string{"fast-prototype", "guided-studio", "strict-studio"})))
	}
	for i, p := range out {
		out[i] = strings.TrimSuffix(p, ".")
	}
	return out
}

// didYouMean is the hint for a wrong value: the closest names (suggest.Closest), else the one
// name it begins (`strict` for `strict-studio`).
func didYouMean(typed string, names []string) string {
	if close := suggest.Closest(typed, names); len(close) > 0 {
		return suggest.DidYouMean(close)
	}
	var starts []string
	for _, n := range names {
		if len(typed) >= 3 && strings.HasPrefix(n, strings.ToLower(typed)) {
			starts = append(starts, n)
		}
	}
	return suggest.DidYouMean(starts)
}

// joinAnd joins words as a sentence lists them: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// runInit validates the flags, then writes initFiles. Exit codes: 0 done (files kept are not an
// error), 1 a file cannot be written or the labels cannot be made, 2 usage (a missing flag or a
// wrong value, every one named at once).
func runInit(ctx context.Context, e env, o initOptions) error {
	if problems := initFlagProblems(o); len(problems) > 0 {
		return usagef("%s", strings.Join(problems, "\nstudio init: "))
	}
	engine := engineAliases[strings.ToLower(strings.TrimSpace(o.engine))]
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(o.name), "-"), "-")
	if slug == "" {
		return failf("project name %q has no letters or digits to make a slug from", o.name)
	}
	var target labelTarget
	if o.labels {
		var err error
		if target, err = labelTargetFrom(o.repo, o.token, e.getenv); err != nil {
			return usagef("%v", err) // a flag is missing: the command line is wrong (exit 2)
		}
	}
	milestone := "prototype"
	if o.mode == "design" || o.mode == "development" {
		milestone = o.mode
	}
	competitors := []string{}
	for _, c := range o.competitors {
		if c = strings.TrimSpace(c); c != "" {
			competitors = append(competitors, c)
		}
	}
	state := policy.StudioConfig{
		SchemaVersion: 1, Product: "codex-game-studio", Name: o.name, Slug: slug, Concept: orText(o.concept, o.name+" concept"),
		Genre: o.genre, Platform: o.platform, Audience: o.audience, Competitors: competitors, Monetization: o.monetization,
		Timeline: o.timeline, Engine: engine, EngineVersion: orText(o.engineVersion, engineVersions[engine]), Mode: policy.ProjectStage(o.mode),
		StudioMode: policy.StudioMode(o.studioMode), Phase: "Initialization", Status: policy.StatusActive, CurrentMilestone: milestone,
		Roles: prompts.RolesForEngine(engine), ActiveRoles: prompts.ActiveRolesFor(o.mode, engine), Workflows: prompts.BuiltinWorkflowIDs(),
	}
	files, err := initFiles(state, o.labelPrefix, o.full, o.serve)
	if err != nil {
		return failf("%v", err)
	}
	ask := initStdinIsTerminal() && !o.nonInteractive && !o.force
	written, err := writeInitFiles(o.project, files, o.force, ask, e)
	if err != nil {
		return failf("%v", err)
	}
	if o.full {
		// Last, as the seed's init: the context manifest of what is now on disk (so of the files
		// kept as well as those written), under the same rule for a file that exists. Only the
		// full layout has one: runs select their context afresh without it, and a manifest goes
		// stale with every edit of the files it lists.
		manifest, err := contextManifestFiles(ctx, o.project)
		if err != nil {
			fmt.Fprintf(e.stdout, "skipped %s: %v (`studio refresh-context` writes it)\n", prompts.ContextManifestPath, err)
		}
		more, err := writeInitFiles(o.project, manifest, o.force, ask, e)
		if err != nil {
			return failf("%v", err)
		}
		written = append(written, more...)
	}
	if o.labels {
		if err := createLabels(ctx, target, studioLabels(o.labelPrefix, state.Roles), e.stdout, e.stderr); err != nil {
			return failf("%v", err)
		}
	}
	printNextSteps(e.stdout, gitAddPaths(written), o.labels, o.labelPrefix, o.studioMode)
	return nil
}

// contextManifestFiles are the context manifest and its meta for the checkout at root, as
// `studio refresh-context` writes them.
func contextManifestFiles(ctx context.Context, root string) ([]initFile, error) {
	project, err := prompts.LoadProject(ctx, root)
	if err != nil {
		return nil, err
	}
	manifest, meta, err := prompts.BuildContextManifest(ctx, root, project)
	if err != nil {
		return nil, err
	}
	return []initFile{{path: prompts.ContextManifestPath, data: manifest, note: " (what a run's default context selects; studio refresh-context rewrites it)"},
		{path: prompts.ContextManifestMetaPath, data: meta}}, nil
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// writeInitFiles writes files under root. A file that exists is replaced only with force, or
// when the person at the terminal says so (ask); otherwise it is kept and listed. The pack
// (keep) is never replaced. It returns the files written.
func writeInitFiles(root string, files []initFile, force, ask bool, e env) ([]initFile, error) {
	answers := bufio.NewReader(initStdin)
	replaceAll := false
	var written []initFile
	groups := map[string]int{}
	var groupOrder []string
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		_, err := os.Lstat(p)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return written, err
		case err == nil && f.keep:
			fmt.Fprintf(e.stdout, "kept %s: it exists, and init never replaces it\n", f.path)
			continue
		case err == nil && !force && !replaceAll:
			replace := false
			if ask {
				fmt.Fprintf(e.stderr, "%s exists. Replace it? [y]es, [n]o, [a]ll: ", f.path)
				line, _ := answers.ReadString('\n')
				switch strings.ToLower(strings.TrimSpace(line)) {
				case "y", "yes":
					replace = true
				case "a", "all":
					replace, replaceAll = true, true
				}
			}
			if !replace {
				hint := "--force replaces it"
				if ask {
					hint = "kept as answered"
				}
				fmt.Fprintf(e.stdout, "skipped %s: it exists (%s)\n", f.path, hint)
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return written, err
		}
		written = append(written, f)
		if f.group != "" {
			if groups[f.group] == 0 {
				groupOrder = append(groupOrder, f.group)
			}
			groups[f.group]++
			continue
		}
		fmt.Fprintf(e.stdout, "wrote %s%s\n", f.path, f.note)
	}
	for _, g := range groupOrder {
		fmt.Fprintf(e.stdout, "wrote %d %s\n", groups[g], g)
	}
	return written, nil
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
		step("Commit and push to the default branch:\n       git add %s\n       git commit -m \"Set up Codex Studio\" && git push", wrapWords(written, 90, " \\\n           "))
	} else {
		step("Commit and push the studio's files to the default branch, if they are not there yet.")
	}
	if !labelsDone {
		step("Optionally create the studio's labels: rerun with --labels --repo OWNER/NAME and a token in\n     GITHUB_TOKEN (or --token).")
	}
	step("Open an issue from the \"Studio task\" form (Issues → New issue), then comment `/studio run`\n     on it (%srun as a label works too).", labelPrefix)
	step("Try it locally first: `studio start` prints the onboarding prompt, and\n     `studio run producer \"Plan the first milestone\" --dry-run` shows what a run would do.")
	// The first run's shape depends on the mode: say it, so nobody expects code and gets a plan.
	if studioMode == string(policy.ModeFastPrototype) {
		fmt.Fprintln(w, "\nstudioMode is fast-prototype: /studio run commits code straight away, with no approval.")
	} else {
		fmt.Fprintf(w, "\nstudioMode is %s: the first /studio run opens a draft pull request with a plan, and\napproving it starts the implementation (--studio-mode fast-prototype skips approvals).\n", studioMode)
	}
}

// gitAddPaths names what `git add` needs for the files written: each file, except that a
// directory init fills as a whole (the role files, the engine reference) is named once.
func gitAddPaths(written []initFile) []string {
	var out []string
	for _, f := range written {
		p := f.path
		if f.addAs != "" {
			p = f.addAs
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// wrapWords joins words with spaces, breaking the line with sep before a word that would pass
// width (counted from the line's start, for a command spread over shell continuation lines).
func wrapWords(words []string, width int, sep string) string {
	var b strings.Builder
	n := 0
	for i, w := range words {
		if i > 0 && n+1+len(w) > width {
			b.WriteString(sep)
			n = len(sep) - strings.LastIndex(sep, "\n") - 1
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
