package runnermodel

import (
	"reflect"
	"strings"
	"testing"
)

// names lists the processed commands as "name data", for compact expectations.
func names(s *Step) []string {
	var out []string
	for _, c := range s.Processed {
		out = append(out, strings.TrimSpace(c.Name+" "+c.Data))
	}
	return out
}

// The model reproduces the runner's parsing and its stop/resume state; each case is a behaviour
// read in ActionCommand.cs or ActionCommandManager.cs.
func TestStepProcessesLikeTheRunner(t *testing.T) {
	for _, tc := range []struct {
		name, stdout string
		want         []string
		masks        []string
	}{
		{name: "v2 command", stdout: "::add-mask::s3cret\n", want: []string{"add-mask s3cret"}, masks: []string{"s3cret"}},
		{name: "leading white space is trimmed", stdout: "   \t::warning::w\n", want: []string{"warning w"}},
		{name: "v2 only at the start", stdout: "x ::warning::w\n"},
		{name: "v1 anywhere in the line", stdout: "prefix ##[set-output name=x;]y\n", want: []string{"set-output y"}},
		{name: "unregistered commands are output", stdout: "::frobnicate::x\n##[nope]y\n::Approved::\n"},
		{name: "names ignore case", stdout: "::ADD-MASK::v\n", want: []string{"add-mask v"}, masks: []string{"v"}},
		{name: "data is unescaped", stdout: "::warning::a%0Ab%25\n", want: []string{"warning a\nb%"}},
		{name: "carriage returns end lines", stdout: "text\r::add-mask::a\r\n::add-mask::b\rc", want: []string{"add-mask a", "add-mask b"}, masks: []string{"a", "b"}},
		{
			name:   "stopped until the token, by v2",
			stdout: "::stop-commands::tok\n::add-mask::no\n::error::no\n::tok::\n::add-mask::yes\n",
			want:   []string{"stop-commands tok", "tok", "add-mask yes"}, masks: []string{"yes"},
		},
		{
			name:   "the token resumes in any case and as v1",
			stdout: "::stop-commands::Resume1234\n::add-mask::no\nsome ##[RESUME1234]text\n::add-mask::yes\n",
			want:   []string{"stop-commands Resume1234", "resume1234 text", "add-mask yes"}, masks: []string{"Resume1234", "yes"},
		},
		{
			name:   "a stop inside a stop is ignored",
			stdout: "::stop-commands::aaa\n::stop-commands::bbb\n::aaa::\n::add-mask::yes\n::bbb::\n",
			want:   []string{"stop-commands aaa", "aaa", "add-mask yes"}, masks: []string{"yes"},
		},
		{name: "a registered command is no token", stdout: "::stop-commands::add-mask\n::add-mask::yes\n", want: []string{"add-mask yes"}, masks: []string{"yes"}},
		{name: "pause-logging is no token", stdout: "::stop-commands::pause-logging\n::add-mask::yes\n", want: []string{"add-mask yes"}, masks: []string{"yes"}},
		{name: "an empty token is refused", stdout: "::stop-commands::\n::add-mask::yes\n", want: []string{"add-mask yes"}, masks: []string{"yes"}},
		{name: "short tokens are not masked", stdout: "::stop-commands::X\n", want: []string{"stop-commands X"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStep()
			s.Feed(Lines("stdout", tc.stdout))
			if got := names(s); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("processed %q, want %q", got, tc.want)
			}
			if !reflect.DeepEqual(s.Masks, tc.masks) {
				t.Errorf("masks %q, want %q", s.Masks, tc.masks)
			}
		})
	}
}

func TestProperties(t *testing.T) {
	s := NewStep()
	s.Feed(Lines("stdout", "::error title=Review%3A ok,file=a.go::Approved\n##[set-output name=branch;]main\n"))
	if len(s.Processed) != 2 {
		t.Fatalf("processed %v", s.Processed)
	}
	if got := s.Processed[0].Properties; got["title"] != "Review: ok" || got["file"] != "a.go" {
		t.Errorf("v2 properties %v", got)
	}
	if got := s.Processed[1].Properties; got["name"] != "branch" {
		t.Errorf("v1 properties %v", got)
	}
}

func TestLines(t *testing.T) {
	got := Lines("stdout", "a\nb\r\nc\rd\n\ne")
	var texts []string
	for _, l := range got {
		texts = append(texts, l.Text)
	}
	if want := []string{"a", "b", "c", "d", "", "e"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("lines %q, want %q", texts, want)
	}
}

// One stream's stop is the other stream's too: the runner has one command manager per step, and
// its two reader threads decide the order.
func TestStreamsShareTheState(t *testing.T) {
	out := "::add-mask::later\n"
	errText := "::stop-commands::agent\n"
	var stopped, processed int
	for _, order := range Interleavings() {
		s := Run(out, errText, order)
		if len(s.Masks) == 0 {
			stopped++
		} else {
			processed++
		}
	}
	if stopped == 0 || processed == 0 {
		t.Errorf("%d orders lost the mask, %d kept it; want both outcomes among the interleavings", stopped, processed)
	}
}
