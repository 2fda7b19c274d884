package bot

import (
	"context"
	"fmt"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"sort"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/suggest"
)

// Command is a parsed slash command.
type Command struct {
	Line string // the command line as written, for quoting back
	Verb string // a verb of the table; "" when the line names no verb
	// Opts are the verb's own options, parsed by the verb's own parser (RunOptions for `run`);
	// nil for a verb that takes none. No verb can see another verb's flags.
	Opts any
	// Err is a usage error (an unknown verb, flag or argument) to reply with. A command with an
	// error must not act: nothing may change because of it, and it never counts as a revoke.
	Err error
}

// verb is one command of the table: how it is written, who may use it, and what handles it where.
// Each verb lives in its own file (verb_*.go) and registers itself.
type verb struct {
	name  string
	order int      // position in help and in the verb list
	args  string   // its positional arguments, for the usage line and help ("<id>")
	flags []string // for the usage line and help
	where string   // where the verb works, for help
	what  string   // one line of what it does, for help
	// parse reads the verb's arguments (after the verb) into its options; nil takes none.
	parse func(args []string) (any, error)
	// anyone: no permission is needed and nothing is locked (help reveals nothing the docs do not).
	anyone bool
	// needsBase: the handler reads the default branch's checkout, fetched before the lock so the
	// lock commit can carry its tree.
	needsBase bool
	// onIssue handles the verb on a task issue, onPull on a studio pull request; both run under
	// the task's lock, after the shared preamble. nil: the verb does not work there.
	// Both record their result in the run's outcome (run.out), which the preamble returns.
	onIssue func(ctx context.Context, r *run) error
	onPull  func(ctx context.Context, r *run, pr hub.PullRequest) error
	// open handles a verb any reader may use, outside the lock (help).
	open func(b *eventBot, ctx context.Context, tr Trigger, cmd Command) (Outcome, error)
	// served says whether `studio serve` answers the command itself (it only reads or writes
	// GitHub: no Codex, no workspace) rather than dispatching it to the repository's workflow;
	// nil: never. Help and status (anyone) are answered by every front door.
	served func(opts any) bool
}

// always is a served for a verb the server always answers itself.
func always(any) bool { return true }

// verbs is the command table, in help order.
var verbs []*verb

func register(v *verb) {
	verbs = append(verbs, v)
	sort.SliceStable(verbs, func(i, j int) bool { return verbs[i].order < verbs[j].order })
}

func verbNamed(name string) *verb {
	for _, v := range verbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

// CommandError is a usage error: what was wrong and how the command is written.
type CommandError struct {
	Problem string // already quoted for Markdown
	Usage   string
}

func (e *CommandError) Error() string { return e.Problem + " " + e.Usage }

func flagList(v *verb) string {
	var flags string
	if v.args != "" {
		flags = " " + v.args
	}
	for _, f := range v.flags {
		flags += " [" + f + "]"
	}
	return flags
}

func usageOf(phrase string, v *verb) string {
	where := v.where
	if len(v.flags) == 0 {
		where += "; takes no flags"
	}
	return fmt.Sprintf("Usage: `%s %s%s` (%s).", phrase, v.name, flagList(v), where)
}

// HelpText is the answer to `/studio help`: every verb of the table with its flags, where it
// works and what it does.
func HelpText(phrase string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The commands, each at the start of a line of its own:\n\n")
	var gated []string
	for _, v := range verbs {
		fmt.Fprintf(&b, "- `%s %s%s` (%s): %s.\n", phrase, v.name, flagList(v), v.where, v.what)
		if !v.anyone {
			gated = append(gated, "`"+v.name+"`")
		}
	}
	fmt.Fprintf(&b, "\n%s need write, maintain or admin permission on the repository.", texts.AndList(gated))
	return b.String()
}

func verbList(phrase string) string {
	var names []string
	for _, v := range verbs {
		names = append(names, fmt.Sprintf("`%s %s`", phrase, v.name))
	}
	return "The commands are " + texts.AndList(names) + "."
}

// verbsWhere lists the verbs that work on an issue (pull false) or a pull request (pull true).
func verbsWhere(phrase string, pull bool) string {
	var names []string
	for _, v := range verbs {
		if (pull && (v.onPull != nil || v.open != nil)) || (!pull && (v.onIssue != nil || v.open != nil)) {
			names = append(names, fmt.Sprintf("`%s %s`", phrase, v.name))
		}
	}
	return texts.AndList(names)
}

// ParseCommand finds the first line of visible text in body that starts with the trigger phrase
// and parses it. Only what a person typed counts (policy.ScanMarkdown): a line in a code block,
// inline code, a blockquote, a list item, an HTML comment or a <details> block is never a
// command, and the phrase must match exactly in ASCII (case-insensitively), so a fullwidth or
// Cyrillic look-alike, a zero-width character or a non-breaking space never triggers. ok is false
// when the body has no such line, so discussion mentioning "/studio" mid-sentence never triggers.
// A line that is found but malformed comes back with Err set.
func ParseCommand(body, phrase string) (cmd Command, ok bool) {
	if phrase == "" {
		return Command{}, false
	}
	for _, l := range policy.ScanMarkdown(body).Lines {
		fields := asciiFields(l.Text)
		if len(fields) == 0 || !policy.ASCIIEqualFold(fields[0], phrase) {
			continue
		}
		return parseCommandFields(l.Text, fields[1:], phrase), true
	}
	return Command{}, false
}

func parseCommandFields(line string, args []string, phrase string) Command {
	cmd := Command{Line: line}
	if len(args) == 0 {
		cmd.Err = &CommandError{Problem: texts.NeedsVerb(phrase), Usage: verbList(phrase)}
		return cmd
	}
	v := verbNamed(strings.ToLower(args[0]))
	if v == nil {
		cmd.Err = &CommandError{Problem: texts.NotAVerb(args[0], didYouMeanVerb(phrase, args[0])), Usage: verbList(phrase)}
		return cmd
	}
	cmd.Verb = v.name
	if v.parse == nil {
		if len(args) > 1 {
			cmd.Err = unexpectedArg(phrase, v, args[1])
		}
		return cmd
	}
	opts, err := v.parse(args[1:])
	if err != nil {
		if ua, ok := err.(*unexpectedArgError); ok {
			cmd.Err = unexpectedArg(phrase, v, ua.Arg)
		} else {
			cmd.Err = &CommandError{Problem: err.Error(), Usage: usageOf(phrase, v)}
		}
		return cmd
	}
	cmd.Opts = opts
	return cmd
}

// didYouMeanVerb names the verbs a misspelled one was probably meant to be, as code spans of
// whole commands; only the table's names are echoed, never the typed word.
func didYouMeanVerb(phrase, typed string) string {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	near := suggest.Closest(typed, names)
	spans := make([]string, len(near))
	for i, n := range near {
		spans[i] = fmt.Sprintf("`%s %s`", phrase, n)
	}
	return texts.DidYouMean(spans)
}

// unexpectedArgError is what a verb's parser returns for an argument it does not take.
type unexpectedArgError = taskgraph.UnexpectedArg

func unexpectedArg(phrase string, v *verb, arg string) error {
	return &CommandError{Problem: texts.UnexpectedArgText(phrase, v.name, arg), Usage: usageOf(phrase, v)}
}

// asciiFields splits on ASCII spaces and tabs only: a non-breaking or other Unicode space is part
// of a word, so "/studio\u00a0run" is not the phrase followed by a verb.
func asciiFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}
