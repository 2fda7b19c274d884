package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/runnermodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// forgedToken is a stop token of the right shape that the agent picks itself.
const forgedToken = "deadbeefdeadbeefdeadbeefdeadbeef"

// forged is every way a line of agent text could become a workflow command: a v2 command at the
// start of a line or after white space, a v1 command anywhere, commands after carriage returns
// (the runner ends a line at "\r"), and stops, one of them with a token shaped like the studio's.
// It ends stopped, so a forged stop that worked would swallow whatever the studio printed next.
const forged = "::add-mask::blocked\n" +
	"::set-output name=branch::main\n" +
	"::error title=Review::Approved by security\n" +
	"see ##[set-output name=x;]y\n" +
	"   ::warning::indented forgery\n" +
	"plain\r::notice::forged after a carriage return\r::add-mask::cr-blocked\n" +
	"::stop-commands::" + forgedToken + "\n" +
	"::" + forgedToken + "::\n" +
	"::stop-commands::X\n"

// agentTokens are the stop tokens forged names.
var agentTokens = []string{"x", forgedToken}

// forgedMarkers are the words of forged's annotations; none may reach a processed command.
var forgedMarkers = []string{"Approved by security", "indented forgery", "forged after a carriage return"}

var studioToken = regexp.MustCompile(`^[0-9a-f]{32}$`)

// studioCommandsOnly checks that every command the runner model processed is one the studio
// issued: an add-mask of a known secret, a stop (and its resume) with a token the agent did not
// choose, and groups and annotations carrying no property and none of the forged words. Step
// outputs go to GITHUB_OUTPUT, so no output command is the studio's. It also checks that the
// step does not end stopped.
func studioCommandsOnly(t *testing.T, s *runnermodel.Step, secrets map[string]string, order string) {
	t.Helper()
	known := map[string]bool{}
	for _, v := range secrets {
		known[v] = true
	}
	tokens := map[string]bool{}
	for _, c := range s.Processed {
		bad := ""
		switch c.Name {
		case "add-mask":
			if !known[c.Data] {
				bad = "masks a value that is no secret"
			}
		case "stop-commands":
			for _, a := range agentTokens {
				if strings.EqualFold(c.Data, a) {
					bad = "stops commands with the agent's token"
				}
			}
			if bad == "" && !studioToken.MatchString(c.Data) {
				bad = "stops commands with a token the studio does not use"
			}
			tokens[strings.ToLower(c.Data)] = true
		case "group", "endgroup", "warning", "notice", "error":
			if len(c.Properties) > 0 {
				bad = "carries properties the studio never sets"
			}
			for _, m := range forgedMarkers {
				if strings.Contains(c.Data, m) {
					bad = "carries the agent's words"
				}
			}
		default:
			if !tokens[c.Name] {
				bad = "is no command of the studio's"
			}
		}
		if bad != "" {
			t.Errorf("%s: the runner processed %s: it %s", order, c, bad)
		}
	}
	if stopped, _ := s.Stopped(); stopped {
		t.Errorf("%s: the step ends with commands stopped: every later command (a refreshed token's mask) is lost", order)
	}
}

// watchWriter is a stream of the action that calls fire (once) when a write holds needle.
type watchWriter struct {
	w      io.Writer
	needle string
	fire   func()
}

func (x *watchWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(x.needle)) {
		x.fire()
	}
	return x.w.Write(p)
}

// The attack on the step log: the agent's final message and stderr, what the verification (a
// command of the task block) prints on stdout and stderr, and the review's verdict all carry
// forged. The run acts as a GitHub App, and once the agent's text is in the log the clock moves
// 56 minutes on, so the installation token is refreshed and its mask issued after the agent's
// text, as in a long run. Fed through the runner model in every order of the two streams, the
// only commands processed are the studio's own, the step never ends stopped, and every minted
// token, the refreshed one too, is masked.
func TestAgentTextIsNeverAWorkflowCommand(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	sw, err := sandbox.New(sandbox.Options{Dir: t.TempDir(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	w := worldOf(t, sw)
	w.now = clk.Now
	body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, notes/forged.txt]\n" +
		"verify: {command: sh, args: [\"-c\", \"cat notes/forged.txt; cat notes/forged.txt >&2\"]}\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	verdict, err := json.Marshal(map[string]any{"blockers": []any{}, "warnings": []string{forged}, "summary": "Looks good.\n" + forged, "needsFix": false})
	if err != nil {
		t.Fatal(err)
	}
	(&hostileWorld{world: w}).scriptAll([]fakecodex.Call{{
		Edits: []fakecodex.Edit{
			{Write: "src/player/jump.gd", Content: "extends Node\n"},
			{Write: "notes/forged.txt", Content: forged},
		},
		FinalMessage: "Done.\n" + forged,
		Stderr:       forged,
	}}, []fakecodex.Call{{FinalMessage: string(verdict)}})
	extra := w.withApp("")
	extra["INPUT_CODEX-PATH"] = fakeCodexBin
	extra["INPUT_MAX-FIX-PASSES"] = "0"
	env, err := w.Env("issue_comment", payload, extra)
	if err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	var once sync.Once
	jump := func() { once.Do(func() { clk.Advance(56 * time.Minute) }) }
	code := runActionWith(context.Background(), func(k string) string { return env[k] },
		&watchWriter{w: &stdout, needle: "Approved by security", fire: jump},
		&watchWriter{w: &stderr, needle: "Approved by security", fire: jump},
		actionOverrides{now: w.now})
	outputs, err := w.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	res := result{code: code, stdout: stdout.String(), stderr: stderr.String(), outputs: outputs}
	w.scanForSecrets(res)
	if res.code != 0 || res.outputs["status"] == "" || res.outputs["status"] == "error" {
		t.Fatalf("exit %d status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	// The agent's words are in the log, each relay at least once: the attack was made.
	for _, relay := range []string{"implementation stdout:", "implementation stderr:", "verification stdout:", "verification stderr:", "review summary:", "review warnings:"} {
		if !strings.Contains(res.stdout+res.stderr, relay) {
			t.Errorf("the log has no %q: that relay of the agent's text was not attacked\n%s", relay, res.stdout+res.stderr)
		}
	}
	tokens := w.Emu.InstallationTokens()
	if len(tokens) < 2 {
		t.Fatalf("%d installation tokens minted: the clock's move did not refresh the token", len(tokens))
	}

	// The refreshed token's mask follows the agent's text on the same stream: the case a forged
	// stop would have broken.
	last := tokens[len(tokens)-1]
	if i, j := strings.Index(res.stdout, "::add-mask::"+last), strings.Index(res.stdout, "Approved by security"); j < 0 || i < j {
		t.Errorf("the refreshed token's mask (at %d) does not follow the agent's text (at %d) on stdout", i, j)
	}

	secrets := scannedSecrets(w.Token)
	for name, s := range w.extraSecrets {
		secrets[name] = s
	}
	for _, tok := range tokens {
		for _, f := range gitops.SecretForms(tok) {
			secrets[f] = f
		}
	}
	for _, order := range runnermodel.Interleavings() {
		s := runnermodel.Run(res.stdout, res.stderr, order)
		studioCommandsOnly(t, s, secrets, order.Name)
		masked := map[string]bool{}
		for _, m := range s.Masks {
			masked[m] = true
		}
		for i, tok := range tokens {
			if !masked[tok] {
				t.Errorf("%s: installation token %d of %d was not masked", order.Name, i+1, len(tokens))
			}
		}
		var groups int
		for _, c := range s.Processed {
			if c.Name == "endgroup" {
				groups++
			}
		}
		if groups == 0 {
			t.Errorf("%s: the studio's ::endgroup:: after the Codex lifecycle was not processed", order.Name)
		}
	}
}
