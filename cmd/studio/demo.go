package main

import (
	"context"
	"fmt"
	"io"
)

func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "demo: not yet wired")
	return exitError
}
