package bot

import (
	"reflect"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
)

// FuzzParseCommand: a command is only ever found at the start of a visible prose line, exactly
// as the phrase in ASCII; a well-formed one has a known verb and only that verb's flags; and
// parsing the line it was found on again gives the same command.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/studio run", "/studio revoke --dry-run", "> /studio run", "```\n/studio run\n```", "<!--\n/studio run\n-->", "/ſtudio run", "/STUDIO Run --Dry-Run"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmd, ok := ParseCommand(body, "/studio")
		if !ok {
			if cmd != (Command{}) {
				t.Fatalf("no command but %+v", cmd)
			}
			return
		}
		var line *policy.ProseLine
		for _, l := range policy.ScanMarkdown(body).Lines {
			if l.Text == cmd.Line {
				line = &l
				break
			}
		}
		if line == nil {
			t.Fatalf("command line %q is not a visible prose line of %q", cmd.Line, body)
		}
		src := strings.TrimLeft(policy.SplitLines(body)[line.Num-1], " ")
		if len(src) < len("/studio") || !policy.ASCIIEqualFold(src[:len("/studio")], "/studio") || !policy.ASCIIEqualFold(cmd.Line[:len("/studio")], "/studio") {
			t.Fatalf("command %q does not start its source line %q with the phrase", cmd.Line, src)
		}
		if cmd.Err == nil {
			switch cmd.Verb {
			case "run":
				if _, ok := cmd.Opts.(RunOptions); !ok {
					t.Fatalf("run without its options: %+v", cmd)
				}
			case "revoke", "review", "accept", "help":
				if cmd.Opts != nil {
					t.Fatalf("%s took options: %+v", cmd.Verb, cmd)
				}
			default:
				t.Fatalf("unknown verb %q without an error", cmd.Verb)
			}
		} else if cmd.Opts != nil {
			t.Fatalf("a refused command carries flags: %+v", cmd)
		}
		again, ok := ParseCommand(cmd.Line, "/studio")
		if !ok || !reflect.DeepEqual(again, cmd) {
			t.Fatalf("ParseCommand(%q) = %+v, %v; first parse %+v", cmd.Line, again, ok, cmd)
		}
	})
}
