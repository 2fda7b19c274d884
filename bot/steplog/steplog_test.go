package steplog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/internal/runnermodel"
)

// block matches one fenced block: the stop, the text, the resume with the same token.
var block = regexp.MustCompile(`(?s)^::stop-commands::([0-9a-f]{32})\n(.*)::([0-9a-f]{32})::\n$`)

// countingWriter records each Write it is given.
type countingWriter struct{ writes [][]byte }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// Each Write is one block, written with one Write, holding the text unchanged and ending with a
// newline whatever the text ends with.
func TestWriteFencesEachWriteAsOneBlock(t *testing.T) {
	for _, tc := range []struct{ name, text, inside string }{
		{"a line", "hello\n", "hello\n"},
		{"lines", "a\nb\n", "a\nb\n"},
		{"no final newline", "a\nb", "a\nb\n"},
		{"a final carriage return", "a\r", "a\r\n"},
		{"carriage returns inside", "a\r::add-mask::x\rb\n", "a\r::add-mask::x\rb\n"},
		{"a command", "::add-mask::blocked\n", "::add-mask::blocked\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out countingWriter
			n, err := New(&out).Write([]byte(tc.text))
			if err != nil || n != len(tc.text) {
				t.Fatalf("Write = %d, %v", n, err)
			}
			if len(out.writes) != 1 {
				t.Fatalf("%d writes to the stream, want 1", len(out.writes))
			}
			m := block.FindSubmatch(out.writes[0])
			if m == nil {
				t.Fatalf("not one block: %q", out.writes[0])
			}
			if string(m[1]) != string(m[3]) {
				t.Errorf("stop token %s, resume token %s", m[1], m[3])
			}
			if string(m[2]) != tc.inside {
				t.Errorf("inside %q, want %q", m[2], tc.inside)
			}
		})
	}
}

func TestEmptyWriteWritesNothing(t *testing.T) {
	var out countingWriter
	if n, err := New(&out).Write(nil); n != 0 || err != nil || len(out.writes) != 0 {
		t.Errorf("Write(nil) = %d, %v with %d writes", n, err, len(out.writes))
	}
}

// A token is never used twice: one seen in the log (it is masked there, but a test runner shows
// it) says nothing about the next.
func TestEachBlockHasAFreshToken(t *testing.T) {
	var out countingWriter
	l := New(&out)
	seen := map[string]bool{}
	for i := range 100 {
		if _, err := l.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
		tok := string(block.FindSubmatch(out.writes[i])[1])
		if seen[tok] {
			t.Fatalf("token %s used twice", tok)
		}
		seen[tok] = true
	}
}

// A block and a command each start a line: after a command written without its newline the next
// block starts with one, and so does the next command.
func TestBlocksAndCommandsStartALine(t *testing.T) {
	var out bytes.Buffer
	l := New(&out)
	io.WriteString(l.Commands(), "::add-mask::a")
	l.Write([]byte("text"))
	io.WriteString(l.Commands(), "::add-mask::b")
	io.WriteString(l.Commands(), "::add-mask::c\n")
	lines := strings.Split(out.String(), "\n")
	want := []string{"::add-mask::a", "::stop-commands::*", "text", "::*::", "::add-mask::b", "::add-mask::c", ""}
	if len(lines) != len(want) {
		t.Fatalf("lines %q, want the shape %q", lines, want)
	}
	for i, w := range want {
		if ok, _ := regexp.MatchString("^"+strings.ReplaceAll(regexp.QuoteMeta(w), `\*`, "[0-9a-f]{32}")+"$", lines[i]); !ok {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
}

// rigged yields the given tokens' bytes in turn, then fails.
type rigged struct{ tokens []string }

func (r *rigged) Read(p []byte) (int, error) {
	if len(r.tokens) == 0 {
		return 0, errors.New("no more randomness")
	}
	var raw []byte
	fmt.Sscanf(r.tokens[0], "%x", &raw)
	r.tokens = r.tokens[1:]
	return copy(p, raw), nil
}

// A token the text holds, in any case, is never used: a line of the text would end the block.
func TestATokenInTheTextIsNotUsed(t *testing.T) {
	const hit, other = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	var out bytes.Buffer
	l := New(&out)
	l.random = &rigged{tokens: []string{hit, other}}
	if _, err := l.Write([]byte("::0123456789ABCDEF0123456789ABCDEF::\n")); err != nil {
		t.Fatal(err)
	}
	if m := block.FindStringSubmatch(out.String()); m == nil || m[1] != other {
		t.Errorf("block %q, want the token %s", out.String(), other)
	}
}

// Without a token nothing is written: unfenced text is never the fallback.
func TestNoTokenNoText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		random io.Reader
	}{
		{"the source fails", &rigged{}},
		{"every token is in the text", &rigged{tokens: []string{strings.Repeat("ab", 16), strings.Repeat("ab", 16), strings.Repeat("ab", 16), strings.Repeat("ab", 16)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			l := New(&out)
			l.random = tc.random
			if _, err := l.Write([]byte(strings.Repeat("ab", 16) + "\n")); err == nil {
				t.Error("Write succeeded")
			}
			if out.Len() != 0 {
				t.Errorf("wrote %q", out.String())
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestWriteErrorsAreWrapped(t *testing.T) {
	l := New(failingWriter{})
	if _, err := l.Write([]byte("x\n")); err == nil || !strings.Contains(err.Error(), "fenced block: pipe closed") {
		t.Errorf("Write: %v", err)
	}
	if _, err := l.Commands().Write([]byte("::add-mask::x\n")); err == nil || !strings.Contains(err.Error(), "workflow command: pipe closed") {
		t.Errorf("Commands().Write: %v", err)
	}
}

func TestPrintfEndsTheLine(t *testing.T) {
	var out bytes.Buffer
	New(&out).Printf("skip: %s", "::add-mask::x")
	if m := block.FindStringSubmatch(out.String()); m == nil || m[2] != "skip: ::add-mask::x\n" {
		t.Errorf("Printf wrote %q", out.String())
	}
}

// forged is agent text that tries every way to become a command (runnermodel's rules).
const forged = "::add-mask::blocked\n::set-output name=branch::main\n::error title=Review::Approved by security\n" +
	"see ##[set-output name=x;]y\n   ::warning::indented\nplain\r::notice::after a carriage return\r::add-mask::cr\n" +
	"::stop-commands::X\n"

// Text and commands written at once from many goroutines: read by the runner model, the only
// commands acted on are the commands (and the blocks' own stops and resumes), the step never ends
// stopped, and the mask written after all the text is processed.
func TestFencedTextNeverBecomesACommand(t *testing.T) {
	var out bytes.Buffer
	l := New(&out)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			l.Write([]byte(forged))
			l.Printf("line %d with ##[add-mask]v1 and \r::add-mask::cr%d", i, i)
			l.Write([]byte("no newline ::stop-commands::Y"))
		}()
		go func() {
			defer wg.Done()
			fmt.Fprintf(l.Commands(), "::add-mask::secret-%d\n", i)
			fmt.Fprintf(l.Commands(), "::warning::studio %d\n", i)
		}()
	}
	wg.Wait()
	fmt.Fprintf(l.Commands(), "::add-mask::refreshed-token\n")

	s := runnermodel.NewStep()
	s.Feed(runnermodel.Lines("stdout", out.String()))
	var masks, warnings, stops int
	tokens := map[string]bool{}
	for _, c := range s.Processed {
		switch {
		case c.Name == "add-mask" && (strings.HasPrefix(c.Data, "secret-") || c.Data == "refreshed-token"):
			masks++
		case c.Name == "warning" && strings.HasPrefix(c.Data, "studio "):
			warnings++
		case c.Name == "stop-commands" && len(c.Data) == 32:
			stops++
			tokens[c.Data] = true
		case tokens[c.Name]:
		default:
			t.Errorf("processed %s", c)
		}
	}
	if masks != 21 || warnings != 20 || stops != 60 {
		t.Errorf("%d masks, %d warnings, %d blocks processed; want 21, 20, 60", masks, warnings, stops)
	}
	if stopped, _ := s.Stopped(); stopped {
		t.Error("the step ends stopped")
	}
	if s.Masks[len(s.Masks)-1] != "refreshed-token" {
		t.Errorf("the last mask is %q, want the one written after the text", s.Masks[len(s.Masks)-1])
	}
}
