// Command studio is the Codex Studio action and its local CLI.
//
// This dispatcher is a placeholder so the prompts commands compile and can be tested; the
// lead's cmd/studio/main.go replaces it at merge.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: studio <guidance|run> ...")
		return 2
	}
	switch args[0] {
	case "guidance":
		return runGuidance(ctx, args[1:], stdout, stderr)
	case "run":
		return runLocal(ctx, args[1:], getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "studio: unknown command %q\n", args[0])
	return 2
}
