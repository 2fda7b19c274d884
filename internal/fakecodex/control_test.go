package fakecodex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/policy/routing"
)

// bin is the executable stand-in, built once: the control server is tested through the process
// that really talks to it.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakecodex-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "codex")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/codex-studio/studio-action/internal/fakecodex/cmd/codex").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build fake codex: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// played is what one run of the executable did.
type played struct {
	code           int
	stdout, stderr string
	lastMessage    string // empty when the file was not written
}

// play runs `codex exec` in a fresh workspace with CODEX_HOME=home, as the studio does.
func play(t *testing.T, home, prompt string, review bool) played {
	t.Helper()
	ws := t.TempDir()
	last := filepath.Join(t.TempDir(), "last-message")
	args := []string{"exec", "--cd", ws, "--output-last-message", last}
	if review {
		args = append(args, "--output-schema", filepath.Join(ws, "schema.json"))
	}
	cmd := exec.Command(bin, append(args, "-")...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	cmd.Stdin = strings.NewReader(prompt)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	p := played{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		p.code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("run the fake codex: %v", err) // not Fatal: play runs in goroutines too
		p.code = -1
	}
	if data, err := os.ReadFile(last); err == nil {
		p.lastMessage = string(data)
	}
	return p
}

// controlled starts a control server for script and a CODEX_HOME naming it.
func controlled(t *testing.T, script fakecodex.Script) (*fakecodex.Control, string) {
	t.Helper()
	ctl, err := fakecodex.StartControl(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Close)
	home := t.TempDir()
	if err := fakecodex.WriteControlFile(home, ctl.URL()); err != nil {
		t.Fatal(err)
	}
	return ctl, home
}

func msgs(ms ...string) []fakecodex.Call {
	var out []fakecodex.Call
	for _, m := range ms {
		out = append(out, fakecodex.Call{FinalMessage: m})
	}
	return out
}

const writing, reviewing = false, true // the kinds of call: writing (or plan) and review

func TestControlPlaysTheScriptInOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script fakecodex.Script
		kinds  []bool
		want   []string
	}{
		{"calls in order, the last repeats", fakecodex.Script{Calls: msgs("a", "b")}, []bool{writing, writing, writing}, []string{"a", "b", "b"}},
		{"reviews counted apart from calls", fakecodex.Script{Calls: msgs("a", "b"), Reviews: msgs("r1", "r2")},
			[]bool{writing, reviewing, writing, reviewing, reviewing}, []string{"a", "r1", "b", "r2", "r2"}},
		{"no reviews pass", fakecodex.Script{Calls: msgs("a")}, []bool{reviewing, writing, reviewing}, []string{fakecodex.PassingReview, "a", fakecodex.PassingReview}},
		{"an empty script answers the defaults", fakecodex.Script{}, []bool{writing, reviewing}, []string{fakecodex.DefaultFinalMessage, fakecodex.PassingReview}},
		{"a call without a message answers the default", fakecodex.Script{Calls: []fakecodex.Call{{Stderr: "working\n"}}}, []bool{writing}, []string{fakecodex.DefaultFinalMessage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctl, home := controlled(t, tc.script)
			for i, review := range tc.kinds {
				p := play(t, home, fmt.Sprintf("prompt %d", i), review)
				if p.code != 0 || p.lastMessage != tc.want[i] {
					t.Fatalf("call %d: exit %d, last message %q, want %q\nstderr: %s", i, p.code, p.lastMessage, tc.want[i], p.stderr)
				}
				if !strings.Contains(p.stdout, `"type":"turn.completed"`) {
					t.Errorf("call %d: no completed turn in the events:\n%s", i, p.stdout)
				}
			}
			invs := ctl.Invocations()
			if len(invs) != len(tc.kinds) {
				t.Fatalf("%d invocations recorded, want %d", len(invs), len(tc.kinds))
			}
			for i, inv := range invs {
				if inv.Review != tc.kinds[i] || inv.Prompt != fmt.Sprintf("prompt %d", i) || inv.Args[0] != "exec" || !slices.Contains(inv.Env, "CODEX_HOME="+home) {
					t.Errorf("invocation %d = review %v, prompt %q, args %v; want review %v and the prompt, argv and environment it was given",
						i, inv.Review, inv.Prompt, inv.Args, tc.kinds[i])
				}
			}
			// CODEX_HOME is private to a call and thrown away: the stand-in must keep nothing there.
			if entries, _ := os.ReadDir(home); len(entries) != 1 || entries[0].Name() != fakecodex.ScriptFile {
				t.Errorf("CODEX_HOME holds %v, want only %s", entries, fakecodex.ScriptFile)
			}
		})
	}
}

// Without a control file the stand-in plays the empty script and writes nothing.
func TestNoControlFilePlaysTheEmptyScript(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		review bool
		want   string
	}{{writing, fakecodex.DefaultFinalMessage}, {reviewing, fakecodex.PassingReview}} {
		if p := play(t, home, "go", tc.review); p.code != 0 || p.lastMessage != tc.want {
			t.Errorf("review=%v: exit %d, last message %q, want %q\nstderr: %s", tc.review, p.code, p.lastMessage, tc.want, p.stderr)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("CODEX_HOME holds %v, want nothing", entries)
	}
}

// A test that scripted its calls must never get a default one instead: a control server that is
// gone, or a control file that names none, fails the call with exit 2 and says why.
func TestUnusableControlFailsLoudly(t *testing.T) {
	closed, err := fakecodex.StartControl(fakecodex.Script{Calls: msgs("never")})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	live, err := fakecodex.StartControl(fakecodex.Script{Calls: msgs("never")})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for _, tc := range []struct {
		name, file, wantStderr string
	}{
		{"the server is closed", `{"control":"` + closed.URL() + `"}`, "control server " + closed.URL()},
		{"the server answers with an error", `{"control":"` + live.URL() + `/nowhere"}`, "404 Not Found"},
		{"an inline script of old", `{"calls":[{"finalMessage":"x"}]}`, "names no control server"},
		{"not JSON", `control`, fakecodex.ScriptFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, fakecodex.ScriptFile), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			p := play(t, home, "go", false)
			if p.code != 2 || !strings.Contains(p.stderr, tc.wantStderr) {
				t.Errorf("exit %d, stderr %q; want exit 2 and a message naming %q", p.code, p.stderr, tc.wantStderr)
			}
			if p.stdout != "" || p.lastMessage != "" {
				t.Errorf("a failed call must play nothing: stdout %q, last message %q", p.stdout, p.lastMessage)
			}
		})
	}
}

// Calls made at once each take their own entry of the script and are logged once.
func TestConcurrentCallsAreCountedOnceEach(t *testing.T) {
	const writes, reviews = 10, 6
	var calls, revs []string
	for i := range writes {
		calls = append(calls, fmt.Sprintf("call %d", i))
	}
	for i := range reviews {
		revs = append(revs, fmt.Sprintf("review %d", i))
	}
	ctl, home := controlled(t, fakecodex.Script{Calls: msgs(calls...), Reviews: msgs(revs...)})
	var mu sync.Mutex
	var gotCalls, gotReviews []string
	var wg sync.WaitGroup
	for i := range writes + reviews {
		wg.Go(func() {
			review := i >= writes
			p := play(t, home, "go", review)
			mu.Lock()
			defer mu.Unlock()
			if p.code != 0 {
				t.Errorf("exit %d: %s", p.code, p.stderr)
			}
			if review {
				gotReviews = append(gotReviews, p.lastMessage)
			} else {
				gotCalls = append(gotCalls, p.lastMessage)
			}
		})
	}
	wg.Wait()
	slices.Sort(gotCalls)
	slices.Sort(gotReviews)
	slices.Sort(calls)
	slices.Sort(revs)
	if !slices.Equal(gotCalls, calls) || !slices.Equal(gotReviews, revs) {
		t.Errorf("played calls %v and reviews %v, want each scripted entry once: %v and %v", gotCalls, gotReviews, calls, revs)
	}
	invs := ctl.Invocations()
	n := 0
	for _, inv := range invs {
		if inv.Review {
			n++
		}
	}
	if len(invs) != writes+reviews || n != reviews {
		t.Errorf("%d invocations (%d reviews) recorded, want %d (%d)", len(invs), n, writes+reviews, reviews)
	}
}

// A new script continues from the calls already played, as rewriting the script file did.
func TestSetScriptKeepsTheCounters(t *testing.T) {
	ctl, err := fakecodex.StartControl(fakecodex.Script{Calls: msgs("a", "b", "c")})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	var got []string
	for i := range 3 {
		if i == 1 {
			s := ctl.Script()
			s.Calls = msgs("x", "y", "z")
			s.Reviews = msgs("r")
			ctl.SetScript(s)
		}
		call, err := fakecodex.Ask(ctl.URL(), fakecodex.Invocation{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, call.FinalMessage)
	}
	review, err := fakecodex.Ask(ctl.URL(), fakecodex.Invocation{Review: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "y", "z", "r"}; !slices.Equal(append(got, review.FinalMessage), want) {
		t.Errorf("played %v, want %v", append(got, review.FinalMessage), want)
	}
}

func TestControlRejectsWhatIsNotAnInvocation(t *testing.T) {
	ctl, err := fakecodex.StartControl(fakecodex.Script{Calls: msgs("a")})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"a read", http.MethodGet, "/invocation", "", http.StatusMethodNotAllowed},
		{"another path", http.MethodPost, "/v1/responses", "{}", http.StatusNotFound},
		{"a body that is not JSON", http.MethodPost, "/invocation", "args", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			ctl.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
	if invs := ctl.Invocations(); len(invs) != 0 {
		t.Errorf("rejected requests were recorded: %+v", invs)
	}
	// And the script was not advanced by them.
	if call, err := fakecodex.Ask(ctl.URL(), fakecodex.Invocation{}); err != nil || call.FinalMessage != "a" {
		t.Errorf("first real call = %+v, %v; want a", call, err)
	}
}

func TestWriteControlFileNamesTheServer(t *testing.T) {
	home := filepath.Join(t.TempDir(), "codex-home")
	if err := fakecodex.WriteControlFile(home, "http://127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(home, fakecodex.ScriptFile))
	if err != nil {
		t.Fatal(err)
	}
	var cf fakecodex.ControlFile
	if err := json.Unmarshal(data, &cf); err != nil || cf.Control != "http://127.0.0.1:1" {
		t.Errorf("control file %s (%v), want it to name the server", data, err)
	}
	if url, err := fakecodex.ReadControlFile(home); err != nil || url != "http://127.0.0.1:1" {
		t.Errorf("ReadControlFile = %q, %v", url, err)
	}
}

// A scripted refusal plays as the real CLI's: exit 1, an error event and turn.failed with the
// message, an empty last message, and the studio's parser reads it as the API's refusal.
func TestTurnFailedPlaysAsTheRealCLI(t *testing.T) {
	const msg = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-x***y., url: http://127.0.0.1:1/v1/responses"
	_, home := controlled(t, fakecodex.Script{Calls: []fakecodex.Call{{TurnFailed: msg}}})
	p := play(t, home, "prompt", writing)
	if p.code != 1 || p.lastMessage != "" || strings.Contains(p.stdout, "turn.completed") {
		t.Fatalf("exit %d, last message %q, events:\n%s", p.code, p.lastMessage, p.stdout)
	}
	ev, err := codex.ParseEvents(strings.NewReader(p.stdout))
	if err != nil {
		t.Fatal(err)
	}
	res := codex.Result{ExitCode: p.code, Events: ev}
	if ref := codex.Refusal(res); ref == nil || ref.Kind != codex.RefusedKey || ref.Status != 401 || ev.Errors[0] != msg {
		t.Errorf("refusal %+v from events %+v", ref, ev)
	}
}

// The in-process Runner plays a refusal the same way, and the lifecycle spends nothing more on
// it: one call, no review, no fix pass.
func TestRunnerTurnFailedEndsTheLifecycle(t *testing.T) {
	r := &fakecodex.Runner{Script: fakecodex.Script{Calls: []fakecodex.Call{{TurnFailed: "Quota exceeded. Check your plan and billing details."}}}}
	routes, err := routing.ResolveRoutes(routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := (&codex.Lifecycle{Runner: r}).Run(context.Background(), codex.Plan{
		Workdir: t.TempDir(), Sandbox: "danger-full-access", Routes: routes, Prompt: "implement", ReviewPrompt: "review",
		MaxFixPasses: 2, FixPrompt: func(context.Context, codex.FixInput) (string, error) { return "fix", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Requests) != 1 || out.FinalStatus != codex.StatusError || out.Refusal == nil || out.Refusal.Kind != codex.RefusedQuota || len(out.FixPasses) != 0 || out.Review != nil {
		t.Errorf("%d calls, status %s, refusal %+v, %d fix passes, review %v", len(r.Requests), out.FinalStatus, out.Refusal, len(out.FixPasses), out.Review)
	}
}
