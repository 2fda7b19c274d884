package bot

import (
	"bytes"
	"reflect"
	"testing"
)

// commandLog records the commands given to it apart from the text written to it.
type commandLog struct {
	bytes.Buffer
	commands [][2]string
}

func (c *commandLog) Command(name, message string) {
	c.commands = append(c.commands, [2]string{name, message})
}

var _ Commander = (*commandLog)(nil)

// Only a format starting with one of the bot's commands issues it; an argument that reads as a
// command stays text, and without a Commander every line is text, as it reads.
func TestLogfIssuesOnlyTheBotsOwnCommands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		format   string
		args     []any
		commands [][2]string
		text     string
	}{
		{name: "a warning", format: "::warning::could not label #%d: %v", args: []any{3, "403\n::add-mask::x"}, commands: [][2]string{{"warning", "could not label #3: 403\n::add-mask::x"}}},
		{name: "a group", format: "::group::Codex lifecycle (%s)", args: []any{"critic"}, commands: [][2]string{{"group", "Codex lifecycle (critic)"}}},
		{name: "an end of group", format: "::endgroup::", commands: [][2]string{{"endgroup", ""}}},
		{name: "an argument that reads as a command", format: "%s", args: []any{"::warning::Approved by security"}, text: "::warning::Approved by security\n"},
		{name: "a command the bot never issues", format: "::add-mask::%s", args: []any{"x"}, text: "::add-mask::x\n"},
		{name: "a plain line", format: "skip: %s", args: []any{"no task"}, text: "skip: no task\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &commandLog{}
			(&Bot{Deps: Deps{Log: log}}).logf(tc.format, tc.args...)
			if !reflect.DeepEqual(log.commands, tc.commands) || log.String() != tc.text {
				t.Errorf("commands %q, text %q; want %q, %q", log.commands, log.String(), tc.commands, tc.text)
			}
		})
	}
	var plain bytes.Buffer
	(&Bot{Deps: Deps{Log: &plain}}).logf("::warning::w %d", 1)
	if plain.String() != "::warning::w 1\n" {
		t.Errorf("without a Commander: %q", plain.String())
	}
}
