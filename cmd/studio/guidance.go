package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/codex-studio/studio-action/prompts/guidance"
)

const guidanceUsage = "usage: studio guidance compile --profile <file> --out <dir>"

// runGuidance implements `studio guidance compile`: a resolved profile in, guidance files out.
// Exit codes: 0 written, 1 the profile or the output directory failed, 2 usage.
func runGuidance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "compile" {
		fmt.Fprintln(stderr, guidanceUsage)
		return 2
	}
	fs := flag.NewFlagSet("studio guidance compile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "", "resolved profile JSON file")
	out := fs.String("out", "", "output directory: guidance/ is written inside it, or is it when it is named guidance")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
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
