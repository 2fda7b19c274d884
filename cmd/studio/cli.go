package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/suggest"
	"github.com/codex-studio/studio-action/prompts"
)

// The local commands are parsed with cobra, as the GitHub CLI's are: flags go anywhere on the
// line (`studio run gameplay-programmer "Implement jump" --dry-run`), `--` ends them, and help
// is generated from the same definitions that parse. The action mode is not a command: run
// dispatches it before cobra sees the arguments (main.go).

// cliError carries a command's exit code. msg, when set, is printed as `<command path>: <msg>`;
// an error that is not a cliError comes from cobra itself (an unknown command or flag, missing
// arguments) and is a usage error.
type cliError struct {
	code  int
	msg   string
	usage bool // also print the command's usage line
}

func (e *cliError) Error() string { return e.msg }

// failf is a run failure (exit 1): the command could not do what was asked.
func failf(format string, args ...any) error {
	return &cliError{code: exitError, msg: fmt.Sprintf(format, args...)}
}

// usagef is a usage error (exit 2): the command line itself is wrong.
func usagef(format string, args ...any) error {
	return &cliError{code: exitUsage, msg: fmt.Sprintf(format, args...), usage: true}
}

// exitWith returns a code a legacy command already reported on stderr.
func exitWith(code int) error {
	if code == exitOK {
		return nil
	}
	return &cliError{code: code}
}

// env is what every command may read besides its flags: the environment (tests pass their own)
// and the output streams.
type env struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

const rootLong = `Codex Studio Action: the GitHub Action ("studio action", the default when
GITHUB_ACTIONS=true) and a local CLI for a checkout.`

// rootWorkflowNote stands for the workflow commands in the root help, which would otherwise be
// most of it (one per workflow alias): they are hidden there, and "studio workflow list" lists them.
const rootWorkflowNote = `Workflow commands (studio market, studio start, studio review, ... one per workflow alias)
print a workflow's prompt and run nothing; "studio workflow list" lists them all.`

func init() {
	// Help lists the commands in the order they are added: the studio's own in workflow order.
	cobra.EnableCommandSorting = false
}

// newRootCmd builds the command tree. Each call builds a fresh tree, so tests can run commands
// side by side.
func newRootCmd(e env) *cobra.Command {
	root := &cobra.Command{
		Use:           "studio <command>",
		Short:         "Codex Studio Action",
		Long:          rootLong,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// cobra's own refusal of an unknown command suggests only the commands help lists, not
		// the hidden workflow commands; the root takes the word instead and refuses it itself.
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			return unknownCommand(c, args[0])
		},
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetVersionTemplate("studio {{.Version}}\n")
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cliError{code: exitUsage, msg: err.Error(), usage: true}
	})
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c != root {
			defaultHelp(c, args)
			return
		}
		printRootHelp(c)
	})
	add := root.AddCommand
	add(&cobra.Command{
		Use:   "action",
		Short: "handle the GitHub Actions event (the default when GITHUB_ACTIONS=true)",
		Args:  cobra.NoArgs,
		// Never reached: run dispatches the action mode before cobra. Listed for help only.
		RunE: func(*cobra.Command, []string) error { return failf("the action mode runs only as the first argument") },
	})
	add(newServeCmd(e, nil))
	add(newInitCmd(e))
	add(legacyCmd("doctor", "check the tools and every studio file of a checkout", "[--project DIR] [--codex-path P] [--codex-engine E] [--agent-user U]",
		func(ctx context.Context, args []string) int {
			return runDoctor(ctx, args, e.getenv, e.stdout, e.stderr)
		}))
	add(newRunCmd(e, nil))
	// The seed's project commands, one help line for all of them (projectGroup).
	add(inProjectGroup(legacyCmd("validate", "check every studio file of a checkout (the seed's project validation)", "[--project DIR] [--base REF]",
		func(ctx context.Context, args []string) int { return runValidate(ctx, args, e.stdout, e.stderr) })))
	add(inProjectGroup(legacyCmd("docs-impact", "check that functional changes since a ref state their documentation impact", "[--project DIR] [--base REF]",
		func(ctx context.Context, args []string) int { return runDocsImpact(ctx, args, e.stdout, e.stderr) })))
	add(newStatusCmd(e))
	add(newResumeCmd(e))
	add(newContextCmd(e))
	add(newTemplatesCmd(e))
	add(newRefreshContextCmd(e))
	add(newApproveCmd(e))
	add(newApprovalCmd(e))
	add(newWorkflowCmd(e))
	add(newLocksCmd(e))
	add(newSpendCmd(e))
	add(newTaskCmd(e))
	add(legacyCmd("guidance", "compile a multi-agent profile into per-role guidance", "compile --profile <file> --out <dir>",
		func(ctx context.Context, args []string) int { return runGuidance(ctx, args, e.stdout, e.stderr) }))
	add(legacyCmd("demo", "play a first task offline (plan pull request, approval, implementation) and print it", "[--studio-mode M] [--dir D] [--real-codex]",
		func(ctx context.Context, args []string) int { return runDemo(ctx, args, e.getenv, e.stdout, e.stderr) }))
	add(&cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(c.OutOrStdout(), "studio", version)
			return nil
		},
	})
	for _, c := range newWorkflowAliasCmds(e) {
		c.Hidden = true
		add(c)
	}
	return root
}

// projectGroup marks the project commands (validate, status, context, ...): the root help names
// them on one line, so the help stays on one screen as the seed's commands are ported.
const projectGroup = "project"

func inProjectGroup(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["group"] = projectGroup
	return c
}

// printRootHelp is the root's help, on one screen: what the binary is, the studio's commands,
// a line for the hidden workflow commands, and where the flags are.
func printRootHelp(root *cobra.Command) {
	w := root.OutOrStdout()
	fmt.Fprintf(w, "%s\n\nUsage: studio <command> [flags]\n\nCommands:\n", root.Long)
	var shown []*cobra.Command
	var projects []string
	width := 0
	for _, c := range root.Commands() {
		switch {
		case c.Annotations["group"] == projectGroup:
			projects = append(projects, c.Name())
		case c.IsAvailableCommand() || c.Name() == "help":
			shown, width = append(shown, c), max(width, len(c.Name()))
		}
	}
	for _, c := range shown {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name(), c.Short)
	}
	if len(projects) > 0 {
		fmt.Fprintf(w, "Project commands: %s\n", strings.Join(projects, ", "))
	}
	fmt.Fprintf(w, "\n%s\n\nRun \"studio <command> --help\" for a command's flags; \"studio --version\" prints the version.\n", rootWorkflowNote)
}

// unknownCommand refuses a word that is no subcommand of c, naming the subcommand (hidden ones
// included) it is closest to.
func unknownCommand(c *cobra.Command, typed string) error {
	var names []string
	for _, sub := range c.Commands() {
		names = append(append(names, sub.Name()), sub.Aliases...)
	}
	hint := suggest.DidYouMean(suggest.Closest(typed, names))
	return usagef("unknown command %q for %q%s", typed, c.CommandPath(), strings.Replace(hint, " Did", ". Did", 1))
}

// subcommandArgs is the Args of a command that only groups subcommands: a word that is none of
// them is refused with the closest one.
func subcommandArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(c, args[0])
	}
	return nil
}

// legacyCmd wraps a command that parses its own flags with the standard flag package; cobra
// only routes to it.
func legacyCmd(name, short, args string, run func(context.Context, []string) int) *cobra.Command {
	return &cobra.Command{
		Use:                name + " " + args,
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			// Cobra parses no flag here: --help reaches the command's own flag set, which answers
			// it on stdout with exit 0 (flaghelp.go).
			return exitWith(run(c.Context(), args))
		},
	}
}

// execute runs the command tree on args and turns the outcome into an exit code, printing the
// error the way the standard flag package did: `studio run: <message>` and, for usage errors,
// the command's usage line.
func execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if cmd == nil {
		cmd = root
	}
	var ce *cliError
	if !errors.As(err, &ce) {
		ce = &cliError{code: exitUsage, msg: err.Error(), usage: true}
	}
	if ce.msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), ce.msg)
	}
	if ce.usage {
		fmt.Fprintf(stderr, "usage: %s\nRun '%s --help' for more.\n", cmd.UseLine(), cmd.CommandPath())
	}
	return ce.code
}

// projectRoot is the checkout a local command works on: --project, else $GITHUB_WORKSPACE,
// else the current directory, made absolute.
func projectRoot(flag string, getenv func(string) string) (string, error) {
	root := flag
	if root == "" {
		root = getenv("GITHUB_WORKSPACE")
	}
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return abs, nil
}

// loadProject reads the checkout's .codex/studio.json for a local command; a checkout without one
// is pointed at studio init, which writes it, rather than shown a file system error.
func loadProject(ctx context.Context, root string) (policy.StudioConfig, error) {
	p, err := prompts.LoadProject(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return p, fmt.Errorf("%s has no %s; create it with `%s` (your own name, engine and mode), or pass --project to the checkout that has one", root, policy.StudioConfigPath, policy.InitCommand)
	}
	return p, err
}

// joinWords joins positional words into one objective, as the seed joins `[objective...]`.
func joinWords(words []string) string { return strings.TrimSpace(strings.Join(words, " ")) }
