package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/golden"
)

// --help of the commands with flags of their own prints their usage, what they do and their flags
// in the CLI's --flag spelling on stdout and exits 0, as cobra's commands do, instead of Go's
// "Usage of ..." on stderr with exit 2. The texts are golden files.
func TestCommandHelpIsAnAnswer(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{{"doctor"}, {"validate"}, {"demo"}, {"docs-impact"}, {"guidance"}, {"guidance", "compile"}} {
		args := append(append([]string{}, cmd...), "--help")
		code, out, errOut := runCLI(args, nil)
		name := strings.Join(cmd, "-")
		if code != exitOK || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and the help on stdout", args, code, errOut)
		}
		if strings.Contains(out, "Usage of ") || !strings.HasPrefix(out, "usage: studio "+strings.Join(cmd, " ")) {
			t.Errorf("%v: not the studio's help:\n%s", args, out)
		}
		golden.Check(t, "help/"+name+".txt", out)
	}
	// A wrong flag is still a usage error, with the message and the usage line.
	code, _, errOut := runCLI([]string{"doctor", "--bogus"}, nil)
	if code != exitUsage || !strings.Contains(errOut, "flag provided but not defined: -bogus") || !strings.Contains(errOut, "usage: studio doctor") {
		t.Errorf("doctor --bogus: exit %d\n%s", code, errOut)
	}
}
