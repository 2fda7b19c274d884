package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/codex-studio/studio-action/prompts/guidance"
)

const guidanceUsage = "usage: studio guidance compile --profile <file> --out <dir>"

const guidanceAbout = `Compiles a resolved multi-agent profile (.codex/profile.json) into per-role guidance files, the
ones a run of each role installs (docs/studios.md).`

// runGuidance implements `studio guidance compile`: a resolved profile in, guidance files out.
// Exit codes: 0 written, 1 the profile or the output directory failed, 2 usage.
func runGuidance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		fmt.Fprintf(stdout, "usage: studio guidance compile --profile <file> --out <dir>\n\n%s\n", guidanceAbout)
		return exitOK
	}
	if len(args) == 0 || args[0] != "compile" {
		fmt.Fprintln(stderr, guidanceUsage)
		return 2
	}
	fs := flag.NewFlagSet("studio guidance compile", flag.ContinueOnError)
	profile := fs.String("profile", "", "resolved profile JSON file")
	out := fs.String("out", "", "output directory: guidance/ is written inside it, or is it when it is named guidance")
	if ok, code := parseFlags(fs, args[1:], "studio guidance compile --profile <file> --out <dir>", guidanceAbout, stdout, stderr); !ok {
		return code
	}
	if *profile == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, guidanceUsage)
		return 2
	}
	written, err := guidance.CompileFile(ctx, *profile, *out)
	if err != nil {
		fmt.Fprintf(stderr, "studio guidance compile: %v\n", err)
		return 1
	}
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	return 0
}
