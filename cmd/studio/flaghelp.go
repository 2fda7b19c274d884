package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// parseFlags parses the flags of a command that uses the standard flag package (doctor,
// validate, docs-impact, demo, guidance compile) the way the cobra commands answer: --help prints
// the usage line, what the command does and its flags in the CLI's --flag spelling on stdout and
// exits 0; a wrong flag prints Go's message and the usage line on stderr and exits 2. ok is false
// when the caller must return code.
func parseFlags(fs *flag.FlagSet, args []string, usage, about string, stdout, stderr io.Writer) (ok bool, code int) {
	fs.SetOutput(io.Discard) // the messages are printed below, once, where they belong
	err := fs.Parse(args)
	switch {
	case err == nil:
		return true, exitOK
	case errors.Is(err, flag.ErrHelp):
		printFlagHelp(stdout, fs, usage, about)
		return false, exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\nusage: %s\nRun '%s --help' for more.\n", fs.Name(), err, usage, fs.Name())
	return false, exitUsage
}

// printFlagHelp is --help: the usage line, the text and each flag with its default.
func printFlagHelp(w io.Writer, fs *flag.FlagSet, usage, about string) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", usage, strings.TrimSpace(about))
	var lines [][2]string
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool {
			name += " " + flagValueName(f)
		}
		text := f.Usage
		if f.DefValue != "" && f.DefValue != "false" {
			text += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		lines = append(lines, [2]string{name, text})
		width = max(width, len(name))
	})
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
	}
}

// flagValueName is the placeholder a flag's value is shown with.
func flagValueName(f *flag.Flag) string {
	if name, _ := flag.UnquoteUsage(f); name != "" {
		return name
	}
	return "value"
}
