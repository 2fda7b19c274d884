// Package runnermodel is a test-only model of how the GitHub Actions runner reads workflow
// commands out of a step's output (actions/runner: src/Runner.Common/ActionCommand.cs,
// src/Runner.Worker/ActionCommandManager.cs, src/Runner.Worker/Handlers/OutputManager.cs,
// src/Runner.Sdk/ProcessInvoker.cs). Tests feed it what the studio printed to see which lines a
// real runner would have acted on. It is shared by the tests of bot/steplog and cmd/studio, as
// internal/ghemu models GitHub; no production code imports it.
//
// What it models:
//   - Lines are split as .NET's StreamReader.ReadLine splits them: at "\n", "\r" and "\r\n".
//   - v2 commands: after TrimStart the line starts with "::"; the command (and its properties)
//     runs to the next "::", the data is the rest.
//   - v1 commands: "##[cmd props]data" found anywhere in the line, tried only when v2 fails.
//   - Only registered commands count (a line naming another is plain output).
//   - "::stop-commands::TOKEN" stops all processing until a line parses, v2 or v1, as the command
//     TOKEN (compared ignoring case); the token may not be a registered command or
//     "pause-logging"; a token longer than 6 characters is masked.
//   - stdout and stderr are read by two threads into one command manager: their lines reach it
//     in an order the step does not control (Interleavings).
//
// What it leaves out: the commands' effects beyond recording them, problem matchers, and the
// "notice" command's server-side feature flag (taken as on, as on github.com).
package runnermodel

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
)

// registered are the runner's command extensions, plus stop-commands (internal-set-repo-path is
// registered only while a runner plugin runs, never for an action's step).
var registered = []string{
	"stop-commands",
	"set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher", "remove-matcher",
	"debug", "echo", "warning", "error", "notice", "group", "endgroup",
}

// Command is one line the runner acted on.
type Command struct {
	Stream     string // "stdout" or "stderr"
	Line       string // the line as printed
	Name       string // lower case
	Properties map[string]string
	Data       string
}

func (c Command) String() string { return fmt.Sprintf("%s: %q", c.Stream, c.Line) }

// Step is the runner's command manager for one step.
type Step struct {
	registered map[string]bool // lower case
	stopped    bool
	token      string

	// Processed are the commands acted on, in order, including the stops and resumes.
	Processed []Command
	// Masks are the values the runner now hides: add-mask data and long stop tokens.
	Masks []string
	// Refused are the stop-commands the runner rejected (an invalid token fails the command).
	Refused []Command
}

// NewStep returns the state a step starts in: commands on.
func NewStep() *Step {
	s := &Step{registered: map[string]bool{}}
	for _, c := range registered {
		s.registered[c] = true
	}
	return s
}

// Stopped reports whether commands are off, and the token that turns them back on.
func (s *Step) Stopped() (bool, string) { return s.stopped, s.token }

// Feed processes lines in the order given.
func (s *Step) Feed(lines []Line) {
	for _, l := range lines {
		s.line(l)
	}
}

// line is ActionCommandManager.TryProcessCommand for one line.
func (s *Step) line(l Line) {
	// OutputManager.OnDataReceived hands a line over only when it holds "##[" or "::".
	if l.Text == "" || (!strings.Contains(l.Text, "##[") && !strings.Contains(l.Text, "::")) {
		return
	}
	cmd, ok := parseV2(l.Text, s.registered)
	if !ok {
		cmd, ok = parseV1(l.Text, s.registered)
	}
	if !ok {
		return
	}
	cmd.Stream, cmd.Line = l.Stream, l.Text
	if s.stopped {
		if s.token != "" && strings.EqualFold(cmd.Name, s.token) {
			delete(s.registered, strings.ToLower(s.token))
			s.stopped, s.token = false, ""
			s.Processed = append(s.Processed, cmd)
		}
		return
	}
	if cmd.Name == "stop-commands" {
		tok := cmd.Data
		if tok == "" || s.registered[strings.ToLower(tok)] || strings.EqualFold(tok, "pause-logging") {
			s.Refused = append(s.Refused, cmd)
			return
		}
		s.stopped, s.token = true, tok
		s.registered[strings.ToLower(tok)] = true
		if len(tok) > 6 {
			s.Masks = append(s.Masks, tok)
		}
		s.Processed = append(s.Processed, cmd)
		return
	}
	if cmd.Name == "add-mask" && cmd.Data != "" {
		s.Masks = append(s.Masks, cmd.Data)
	}
	s.Processed = append(s.Processed, cmd)
}

// parseV2 is ActionCommand.TryParseV2.
func parseV2(message string, reg map[string]bool) (Command, bool) {
	// C#'s TrimStart() trims what Char.IsWhiteSpace accepts: the same set as unicode.IsSpace.
	message = strings.TrimLeftFunc(message, unicode.IsSpace)
	if !strings.HasPrefix(message, "::") {
		return Command{}, false
	}
	end := strings.Index(message[2:], "::")
	if end < 0 {
		return Command{}, false
	}
	end += 2
	info := message[2:end]
	name, props, hasProps := strings.Cut(info, " ")
	if !reg[strings.ToLower(name)] {
		return Command{}, false
	}
	c := Command{Name: strings.ToLower(name), Properties: map[string]string{}}
	// The runner keeps properties only after a space at index > 0.
	if hasProps && name != "" {
		for _, p := range strings.Split(strings.TrimSpace(props), ",") {
			if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
				c.Properties[k] = unescape(v, propertyEscapes)
			}
		}
	}
	c.Data = unescape(message[end+2:], dataEscapes)
	return c, true
}

// parseV1 is ActionCommand.TryParse: "##[" anywhere, the command info up to the next "]".
func parseV1(message string, reg map[string]bool) (Command, bool) {
	i := strings.Index(message, "##[")
	if i < 0 {
		return Command{}, false
	}
	rb := strings.IndexByte(message[i:], ']')
	if rb < 0 {
		return Command{}, false
	}
	rb += i
	info := message[i+3 : rb]
	name, props, hasProps := strings.Cut(info, " ")
	if !reg[strings.ToLower(name)] {
		return Command{}, false
	}
	c := Command{Name: strings.ToLower(name), Properties: map[string]string{}}
	if hasProps && name != "" {
		for _, p := range strings.Split(props, ";") {
			if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
				c.Properties[k] = unescape(v, v1Escapes)
			}
		}
	}
	c.Data = unescape(message[rb+1:], v1Escapes)
	return c, true
}

var (
	v1Escapes       = [][2]string{{";", "%3B"}, {"\r", "%0D"}, {"\n", "%0A"}, {"]", "%5D"}, {"%", "%25"}}
	dataEscapes     = [][2]string{{"\r", "%0D"}, {"\n", "%0A"}, {"%", "%25"}}
	propertyEscapes = [][2]string{{"\r", "%0D"}, {"\n", "%0A"}, {":", "%3A"}, {",", "%2C"}, {"%", "%25"}}
)

// unescape replaces in the runner's order (the percent sign last).
func unescape(s string, mappings [][2]string) string {
	for _, m := range mappings {
		s = strings.ReplaceAll(s, m[1], m[0])
	}
	return s
}

// Line is one line of one stream.
type Line struct {
	Stream, Text string
}

// Lines splits what a stream carried as StreamReader.ReadLine does: "\n", "\r" and "\r\n" each
// end a line; the text after the last terminator is a line of its own when not empty.
func Lines(stream, text string) []Line {
	var out []Line
	for text != "" {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			out = append(out, Line{stream, text})
			break
		}
		out = append(out, Line{stream, text[:i]})
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return out
}

// Interleaving is one order in which the runner's two reader threads may hand over the lines
// of stdout and stderr; within a stream the order is kept.
type Interleaving struct {
	Name  string
	merge func(out, err []Line) []Line
}

// Merge returns the lines of both streams in this order.
func (i Interleaving) Merge(out, err []Line) []Line { return i.merge(out, err) }

// Interleavings are the orders a test checks: each stream first, line by line alternating, and
// a few seeded random merges.
func Interleavings() []Interleaving {
	is := []Interleaving{
		{"stdout first", func(o, e []Line) []Line { return append(append([]Line{}, o...), e...) }},
		{"stderr first", func(o, e []Line) []Line { return append(append([]Line{}, e...), o...) }},
		{"alternating", func(o, e []Line) []Line {
			var out []Line
			for i := 0; i < len(o) || i < len(e); i++ {
				if i < len(e) {
					out = append(out, e[i])
				}
				if i < len(o) {
					out = append(out, o[i])
				}
			}
			return out
		}},
	}
	for seed := uint64(1); seed <= 5; seed++ {
		is = append(is, Interleaving{fmt.Sprintf("random %d", seed), func(o, e []Line) []Line {
			r := rand.New(rand.NewPCG(seed, seed))
			var out []Line
			for len(o) > 0 || len(e) > 0 {
				if len(e) == 0 || (len(o) > 0 && r.IntN(2) == 0) {
					out, o = append(out, o[0]), o[1:]
				} else {
					out, e = append(out, e[0]), e[1:]
				}
			}
			return out
		}})
	}
	return is
}

// Run is a step that printed stdout and stderr, read in order.
func Run(stdout, stderr string, order Interleaving) *Step {
	s := NewStep()
	s.Feed(order.Merge(Lines("stdout", stdout), Lines("stderr", stderr)))
	return s
}
