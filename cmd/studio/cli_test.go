package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/golden"
	"github.com/codex-studio/studio-action/prompts"
)

func init() {
	// go test may inherit a terminal; init must not wait for answers in tests that do not ask.
	initStdinIsTerminal = func() bool { return false }
}

// quotedObjective is how a prompt shows the objective: fenced as the untrusted issue title.
func quotedObjective(s string) string { return "```text\n" + s + "\n```" }

// `studio run` reads its flags anywhere on the line, joins the positional words into the
// objective, and lets --task win over them.
func TestRunCLIParsing(t *testing.T) {
	root := copyFixture(t)
	tests := []struct {
		name      string
		args      []string
		objective string
		more      []string
	}{
		{"flags after the objective", []string{"run", "gameplay-programmer", "Implement jump", "--print-prompt", "--project", root}, "Implement jump", nil},
		{"flags first", []string{"run", "--project", root, "--print-prompt", "gameplay-programmer", "Implement jump"}, "Implement jump", nil},
		{"flags between the words", []string{"run", "gameplay-programmer", "Implement", "--print-prompt", "the", "--project", root, "jump"}, "Implement the jump", nil},
		{"--task wins over the positional objective", []string{"run", "gameplay-programmer", "Implement jump", "--task", "Tune drift", "--print-prompt", "--project", root}, "Tune drift", nil},
		{"--task=value form", []string{"run", "--task=Tune drift", "gameplay-programmer", "--print-prompt", "--project=" + root}, "Tune drift", nil},
		{"-- ends the flags", []string{"run", "--print-prompt", "--project", root, "gameplay-programmer", "--", "--dry-run", "is", "a", "word"}, "--dry-run is a word", nil},
		{"positional issue number", []string{"run", "producer", "#12", "--print-prompt", "--project", root}, "Issue #12 (issue text is not fetched in a local run)", []string{"Issue: #12"}},
		{"verify command and model tier", []string{"run", "gameplay-programmer", "Fix", "--verify-command", "godot", "--verify-arg", "--headless", "--verify-arg", "-s", "--model-tier", "sol", "--print-prompt", "--project", root},
			"Fix", []string{"## Verification\ngodot --headless -s", "- Selected model: gpt-5.6-sol\n- Reasoning effort: medium"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(tt.args, nil)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, want := range append([]string{quotedObjective(tt.objective)}, tt.more...) {
				if !strings.Contains(out, want) {
					t.Errorf("prompt lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestRunCLIUsageErrors(t *testing.T) {
	root := copyFixture(t)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"run", "producer", "Plan", "--dry-run", "--bogus", "--project", root}, "studio run: unknown flag: --bogus\nusage: studio run <role> [objective...] [flags]"},
		{"unknown flag before the role", []string{"run", "--bogus", "producer"}, "unknown flag: --bogus"},
		{"single-dash long flag", []string{"run", "producer", "-task", "x", "--dry-run"}, "unknown shorthand flag"},
		{"flag without its value", []string{"run", "producer", "--dry-run", "--task"}, "flag needs an argument: --task"},
		{"no role", []string{"run", "--dry-run", "--project", root}, "a role is required"},
		{"both modes", []string{"run", "producer", "x", "--dry-run", "--print-prompt", "--project", root}, "choose exactly one of --print-prompt or --dry-run"},
		{"bad tier", []string{"run", "producer", "x", "--dry-run", "--model-tier", "mars", "--project", root}, `--model-tier must be sol, terra or luna, not "mars"`},
		{"verify arg alone", []string{"run", "producer", "x", "--dry-run", "--verify-arg", "-s", "--project", root}, "--verify-arg needs --verify-command"},
		{"bad int", []string{"run", "producer", "x", "--dry-run", "--max-fix-passes", "many"}, `invalid argument "many" for "--max-fix-passes"`},
		{"unknown command", []string{"rum", "producer"}, `studio: unknown command "rum" for "studio". Did you mean "run"?`},
		{"misspelled workflow command, hidden from help", []string{"markt"}, `studio: unknown command "markt" for "studio". Did you mean "market"?`},
		{"misspelled subcommand", []string{"task", "craete", "x"}, `studio task: unknown command "craete" for "studio task". Did you mean "create"?`},
		{"nothing close", []string{"frobnicate"}, "studio: unknown command \"frobnicate\" for \"studio\"\nusage: studio"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(tt.args, nil)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.want)
			}
		})
	}
}

// runCLIWithLifecycle is runCLI with `studio run` built around lifecycle instead of the real one.
func runCLIWithLifecycle(t *testing.T, args []string, lifecycle localLifecycle) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := env{getenv: func(string) string { return "" }, stdout: &out, stderr: &errb}
	root := newRootCmd(e)
	real, _, err := root.Find([]string{"run"})
	if err != nil || real.Name() != "run" {
		t.Fatalf("the root has no run command: %v", err)
	}
	root.RemoveCommand(real)
	root.AddCommand(newRunCmd(e, lifecycle))
	code := execute(context.Background(), root, args, &errb)
	return code, out.String(), errb.String()
}

// Without --print-prompt or --dry-run, `studio run` hands its lifecycle the whole command line
// and the facts the inspection modes render from.
func TestRunCLIHandsTheLocalLifecycleTheRun(t *testing.T) {
	root := copyFixture(t)
	var got LocalRun
	lifecycle := func(_ context.Context, r LocalRun, stdout, _ io.Writer) int {
		got = r
		io.WriteString(stdout, "lifecycle ran\n")
		return exitError
	}
	code, out, errOut := runCLIWithLifecycle(t, []string{"run", "gameplay-programmer", "Implement", "--write-file", "src/jump.gd", "jump", "--review", "--fix",
		"--max-fix-passes", "2", "--approval-scope", "src/**", "--verify-command", "godot", "--verify-arg", "--headless",
		"--constrained-sandbox", "--model-tier", "luna", "--include-artifact", "design/gdd.md", "--project", root}, lifecycle)
	if code != exitError || out != "lifecycle ran\n" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q: the lifecycle's code and output must be the command's", code, out, errOut)
	}
	want := LocalRun{Root: root, Role: "gameplay-programmer", Objective: "Implement jump", WriteFiles: []string{"src/jump.gd"},
		Artifacts: []string{"design/gdd.md"}, ApprovalScope: []string{"src/**"}, Verify: []string{"godot", "--headless"}, Review: true, Fix: true,
		MaxFixPasses: 2, ConstrainedSandbox: true, ModelTier: "luna"}
	gotHead := got
	gotHead.Facts, gotHead.Eligibility = prompts.RunFacts{}, want.Eligibility
	if !reflect.DeepEqual(gotHead, want) {
		t.Errorf("run = %+v\nwant %+v", gotHead, want)
	}
	if got.Facts.Phase != "implement" || got.Facts.Routes.Implementation.Tier != "luna" || got.Eligibility.CodexSandbox != "workspace-write" ||
		!reflect.DeepEqual(got.Facts.WriteFiles, []string{"src/jump.gd"}) || got.Facts.Objective != "Implement jump" {
		t.Errorf("facts = %+v, eligibility = %+v", got.Facts, got.Eligibility)
	}
	// A refused role never reaches the lifecycle.
	got = LocalRun{}
	if code, _, errOut := runCLIWithLifecycle(t, []string{"run", "qa_agent", "x", "--project", root}, lifecycle); code != exitError || !strings.Contains(errOut, `Unknown studio role "qa_agent"`) || got.Role != "" {
		t.Errorf("legacy role: exit %d %q, lifecycle saw %+v", code, errOut, got)
	}
}

// Workflow commands print the seed's workflow prompts: by id, by alias, through the alias
// commands, and review and ship-check. The absolute root is replaced for the golden files.
func TestWorkflowCommandsGolden(t *testing.T) {
	root := copyFixture(t)
	for _, tt := range []struct {
		golden string
		args   [][]string
	}{
		{"market.md", [][]string{{"market"}, {"workflow", "market-analysis"}, {"workflow", "render", "market"}, {"market", "--dry-run"}}},
		{"review.md", [][]string{{"review"}, {"workflow", "review"}}},
		{"ship-check.md", [][]string{{"ship-check"}, {"workflow", "render", "ship-check", "--dry-run"}}},
		{"start.md", [][]string{{"start"}, {"onboard"}, {"workflow", "onboard"}}},
		{"feel-review.md", [][]string{{"feel-review"}, {"workflow", "game-feel-tuning"}}},
		{"boss-review.md", [][]string{{"workflow", "boss-review"}, {"workflow", "render", "custom-boss-review"}}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			var first string
			for i, args := range tt.args {
				code, out, errOut := runCLI(append(args, "--project", root), nil)
				if code != exitOK {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				if i == 0 {
					first = out
					golden.Check(t, "workflow/"+tt.golden, strings.ReplaceAll(out, root, "<root>"))
				} else if slices.Contains(args, "--dry-run") {
					// The dry run adds its route paragraph (TestWorkflowDryRunShowsItsRoute) to the same prompt.
					if _, prompt, ok := strings.Cut(out, "Nothing runs.\n\n"); !ok || !strings.HasPrefix(out, "Dry run: ") || prompt != first {
						t.Errorf("%v prints something else than %v after its route", args, tt.args[0])
					}
				} else if out != first {
					t.Errorf("%v prints something else than %v", args, tt.args[0])
				}
			}
		})
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"workflow", "sprint"}, exitError, `studio workflow: Unknown workflow "sprint" (studio workflow list shows them)`},
		{[]string{"workflow"}, exitUsage, "a workflow id is required"},
		{[]string{"workflow", "render"}, exitUsage, "a workflow id is required"},
		{[]string{"workflow", "market", "extra"}, exitUsage, "one workflow id, optionally after render"},
		{[]string{"market", "extra"}, exitUsage, `unknown command "extra" for "studio market"`},
		{[]string{"workflow", "market", "--project", t.TempDir()}, exitError, "has no .codex/studio.json; create it with `studio init"},
	} {
		code, out, errOut := runCLI(tt.args, map[string]string{"GITHUB_WORKSPACE": root})
		if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
	code, out, _ := runCLI([]string{"workflow", "list", "--project", root}, nil)
	for _, want := range []string{"market-analysis", "studio market", "studio start, studio onboard", "studio workflow custom-boss-review, studio workflow boss-review (.codex/studio/config.json)"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("workflow list lacks %q (exit %d):\n%s", want, code, out)
		}
	}
}

// Every built-in workflow renders in a fresh project, and each alias command exists.
func TestEveryWorkflowRenders(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(initArgs(dir), nil); code != exitOK {
		t.Fatal(errOut)
	}
	for _, w := range prompts.BuiltinWorkflows() {
		args := []string{"workflow", w.ID}
		if len(w.Aliases) > 0 {
			args = []string{w.Aliases[len(w.Aliases)-1]}
		}
		code, out, errOut := runCLI(append(args, "--project", dir), nil)
		if code != exitOK || !strings.Contains(out, "Objective: "+w.Objective) || !strings.Contains(out, "Phase: "+w.Phase) {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// The root help fits a screen: the studio's own commands, and the workflow commands (one per
// workflow alias, most of the old 86 lines) only named, since `studio workflow list` lists them.
func TestHelpListsTheCommands(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, _ := runCLI(args, nil)
		if code != exitOK {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, want := range []string{"  run ", "  init ", "  workflow ", "  task ", "  doctor ", "  action ", "  serve ", "  demo ", "studio workflow list"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: help lacks %q", args, want)
			}
		}
		for _, alias := range []string{"  market ", "  ship-check ", "  start "} {
			if strings.Contains(out, alias) {
				t.Errorf("%v: help lists the workflow command %q", args, alias)
			}
		}
		if n := strings.Count(out, "\n"); n > 25 {
			t.Errorf("%v: help is %d lines, more than a 25-line screen:\n%s", args, n, out)
		}
	}
	// Hidden from the help, the workflow commands still work, and `workflow list` names them.
	root := copyFixture(t)
	for _, alias := range []string{"market", "start", "onboard", "ship-check", "review"} {
		if code, out, errOut := runCLI([]string{alias, "--project", root}, nil); code != exitOK || !strings.Contains(out, "# Codex Studio") {
			t.Errorf("studio %s: exit %d %q", alias, code, errOut)
		}
	}
	if code, out, _ := runCLI([]string{"workflow", "list", "--project", root}, nil); code != exitOK || !strings.Contains(out, "studio market") || !strings.Contains(out, "studio start, studio onboard") {
		t.Errorf("workflow list: exit %d\n%s", code, out)
	}
	// A misspelled workflow is answered with the closest id or alias, custom ones included.
	for typed, want := range map[string]string{"markt": `Did you mean "market"?`, "lst": `Did you mean "list"?`, "custom-boss-reveiw": `Did you mean "custom-boss-review"?`} {
		if code, _, errOut := runCLI([]string{"workflow", typed, "--project", root}, nil); code != exitError || !strings.Contains(errOut, want) {
			t.Errorf("workflow %s: exit %d %q, want %q", typed, code, errOut, want)
		}
	}
	code, out, _ := runCLI([]string{"run", "--help"}, nil)
	for _, want := range []string{"studio run <role> [objective...] [flags]", "--task", "--approval-scope", "--model-tier", "--constrained-sandbox", "--verify-arg"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	// The seed's test: help never mentions next, telemetry or parallel as words.
	_, all, _ := runCLI([]string{"--help"}, nil)
	for _, word := range []string{"next", "telemetry", "parallel"} {
		for _, f := range strings.FieldsFunc(strings.ToLower(all), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
			if f == word {
				t.Errorf("help mentions %q", word)
			}
		}
	}
	if code, out, _ := runCLI([]string{"version"}, nil); code != exitOK || out != "studio dev\n" {
		t.Errorf("version: %d %q", code, out)
	}
	if code, out, _ := runCLI([]string{"--version"}, nil); code != exitOK || out != "studio dev\n" {
		t.Errorf("--version: %d %q", code, out)
	}
	if code, _, errOut := runCLI(nil, nil); code != exitUsage || !strings.Contains(errOut, "Usage:") {
		t.Errorf("no args: %d %q", code, errOut)
	}
}

// The built binary in a scratch git repository: init with flags alone, then the issue's own
// example, `studio run gameplay-programmer "Implement jump" --dry-run`, and a workflow alias.
func TestBuiltBinaryInAScratchRepository(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}
	if code, out, errOut := runStudio(t, env, "init", "--name", "Hop", "--engine", "godot", "--mode", "prototype", "--full", "--project", dir); code != 0 || !strings.Contains(out, "wrote AGENTS.md") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	env["GITHUB_WORKSPACE"] = dir
	code, out, errOut := runStudio(t, env, "run", "gameplay-programmer", "Implement jump", "--dry-run")
	for _, want := range []string{"Role: gameplay-programmer", "Eligibility: blocked", "Codex custom agent: .codex/agents/gameplay-programmer.toml", "Omissions and blockers:\n- None"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("run --dry-run lacks %q: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	if code, out, errOut := runStudio(t, env, "milestone", "--dry-run"); code != 0 || !strings.Contains(out, "Objective: Convert current project state into milestone goals") {
		t.Errorf("milestone: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runStudio(t, env, "run", "gameplay-programmer", "Implement jump", "--dry-run", "--nope"); code != 2 || !strings.Contains(errOut, "unknown flag: --nope") {
		t.Errorf("unknown flag: exit %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, ".codex", "runs")); !os.IsNotExist(err) {
		t.Error("an inspection run wrote run files")
	}
}

// docs/cli.md shows the root help as it is, so a reader sees what the terminal will show.
func TestCLIDocShowsTheRootHelp(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, help, _ := runCLI([]string{"--help"}, nil)
	if !strings.Contains(string(doc), "```console\n$ studio --help\n"+help+"```\n") {
		t.Errorf("docs/cli.md must show `studio --help` exactly as it prints:\n%s", help)
	}
}

// Help asked for is no usage error: every command that parses its own flags answers --help with
// its usage on stdout and exit 0 (issue 35, item 9: `studio validate --help` exited 2).
func TestLegacyCommandsAnswerHelpWithExitZero(t *testing.T) {
	for _, name := range []string{"validate", "doctor", "docs-impact", "guidance", "demo"} {
		for _, flag := range []string{"--help", "-h"} {
			code, out, errOut := runCLI([]string{name, flag}, nil)
			if code != exitOK || !strings.Contains(out, "studio "+name) {
				t.Errorf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, flag, code, out, errOut)
			}
		}
	}
	if code, _, _ := runCLI([]string{"validate", "--bogus"}, nil); code != exitUsage {
		t.Errorf("validate --bogus: exit %d, want %d", code, exitUsage)
	}
}

// `workflow render <id> --dry-run` shows the model and effort a run of the workflow routes to, as
// the run resolves it (issue 35, item 9); without --dry-run the output is the prompt alone.
func TestWorkflowDryRunShowsItsRoute(t *testing.T) {
	root := copyFixture(t)
	w, ok := prompts.FindWorkflow(prompts.DefaultCustomization(), "ship-check")
	if !ok {
		t.Fatal("no ship-check workflow")
	}
	s := w.Surface()
	want := fmt.Sprintf("Dry run: a run of ship-check (role %s) routes to %s at %s effort (tier ", w.Role, s.Model, s.Effort)
	for _, args := range [][]string{{"workflow", "render", "ship-check", "--dry-run"}, {"ship-check", "--dry-run"}} {
		code, out, errOut := runCLI(append(args, "--project", root), nil)
		if code != exitOK || !strings.HasPrefix(out, want) {
			t.Errorf("%v: exit %d, want the prefix %q:\n%s%s", args, code, want, out, errOut)
		}
	}
	if _, out, _ := runCLI([]string{"workflow", "render", "ship-check", "--project", root}, nil); strings.Contains(out, "Dry run:") {
		t.Errorf("a render without --dry-run shows the route:\n%s", out)
	}
}
