package policy

import (
	"strings"
	"testing"
)

func TestDecideResume(t *testing.T) {
	kept := ResumeFacts{Live: true, Kept: true, KeptRole: "gameplay-programmer", Role: "gameplay-programmer", LastEnded: "paused"}
	with := func(edit func(*ResumeFacts)) ResumeFacts { f := kept; edit(&f); return f }
	for name, c := range map[string]struct {
		f      ResumeFacts
		resume bool
		why    string
	}{
		"run after a pause":       {kept, true, ""},
		"run after a block":       {with(func(f *ResumeFacts) { f.LastEnded = "blocked" }), true, ""},
		"run after a cap":         {with(func(f *ResumeFacts) { f.LastEnded = "stopped" }), true, ""},
		"run after done":          {with(func(f *ResumeFacts) { f.LastEnded = "done" }), false, ""},
		"continue after done":     {with(func(f *ResumeFacts) { f.LastEnded = "done"; f.Continue = true }), true, ""},
		"fresh":                   {with(func(f *ResumeFacts) { f.Fresh = true; f.Continue = true }), false, "--fresh"},
		"another role":            {with(func(f *ResumeFacts) { f.Role = "technical-artist" }), false, "gameplay-programmer's"},
		"exec engine, continue":   {with(func(f *ResumeFacts) { f.Live = false; f.Continue = true }), false, "exec"},
		"exec engine, run":        {with(func(f *ResumeFacts) { f.Live = false }), false, ""},
		"nothing kept, continue":  {ResumeFacts{Live: true, Continue: true}, false, "no thread is kept"},
		"nothing kept, plain run": {ResumeFacts{Live: true}, false, ""},
		"fresh with nothing kept": {ResumeFacts{Live: true, Fresh: true}, false, ""},
	} {
		resume, why := DecideResume(c.f)
		if resume != c.resume || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: resume %v (%q), want %v (%q)", name, resume, why, c.resume, c.why)
		}
	}
}
