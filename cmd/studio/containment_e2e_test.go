package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// requireRoot skips tests of the jail where it cannot exist: confinement needs root (CI is root).
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent jail switches uids (CI runs as root)")
	}
}

// agentProcesses lists live processes any of whose uids is uid, from /proc/<pid>/status.
func agentProcesses(t *testing.T, uid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var name, state string
		match := false
		for _, line := range strings.Split(string(data), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "Name":
				name = strings.TrimSpace(v)
			case "State":
				state = strings.TrimSpace(v)
			case "Uid":
				for _, f := range strings.Fields(v) {
					match = match || f == strconv.Itoa(uid)
				}
			}
		}
		if match && !strings.HasPrefix(state, "Z") {
			out = append(out, e.Name()+" ("+name+")")
		}
	}
	return out
}

// thief is the scripted agent's shell: it starts a setsid double-forked daemon that ignores
// SIGTERM/SIGHUP and loops as fast as it can over every /proc/<pid>/environ, appending any
// variable with the bot token or a GIT_CONFIG_* name (how the studio hands git its credentials)
// to a file in the workspace (committed: it is in writeFiles), and a heartbeat saying how many
// blocks it could read. The call returns once the daemon has scanned at least once. Run
// unconfined (agent-user none), it does catch the push's GIT_CONFIG_*.
var thief = fmt.Sprintf(`mkdir -p notes
export loot="$PWD/notes/loot.txt" beat="$PWD/notes/heartbeat.txt"
: > "$loot"
(setsid sh -c '
trap "" TERM HUP INT
while :; do
  grep -a -z -h -e %s -e GIT_CONFIG /proc/[0-9]*/environ 2>/dev/null | tr "\000" "\n" >> "$loot"
  echo "scan readable=$(grep -a -z -l . /proc/[0-9]*/environ 2>/dev/null | wc -l)" >> "$beat"
done' >/dev/null 2>&1 </dev/null &)
while [ ! -s "$beat" ]; do sleep 0.01; done
`, sandbox.BotToken)

// containments are the ways a run can confine its agent, each with the inputs that choose it:
// the sandbox (the default) and the uid jail it falls back to, with and without a PID namespace
// (a Docker action lacks CAP_SYS_ADMIN).
var containments = []struct {
	name   string
	inputs map[string]string
	// line is what the status comment and the job summary must say (%d: the agent's uid).
	line string
	// counts says the run sees the daemon it killed: the sandbox's init and the uid sweep count
	// it; a bare PID namespace lets the kernel kill it unseen when Codex exits.
	counts bool
}{
	{"sandbox", map[string]string{}, "Containment: agent runs as uid %d in a sandbox of its own for each call", true},
	{"uid jail", map[string]string{"INPUT_AGENT-SANDBOX": "off"}, "**Containment fallback:** agent runs as uid %d in its own PID namespace, in the uid jail", false},
	{"uid jail without PID namespace", map[string]string{"INPUT_AGENT-SANDBOX": "off", "INPUT_AGENT-PID-NAMESPACE": "false"}, "**Containment fallback:** agent runs as uid %d in the uid jail (no sandbox: agent-sandbox is off); no PID namespace", true},
}

// TestContainedAgentCannotOutliveOrSteal: an agent that leaves a daemon hunting for the token in
// /proc finds nothing, the daemon does not outlive the run, and the run says it was killed.
func TestContainedAgentCannotOutliveOrSteal(t *testing.T) {
	requireRoot(t)
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, nil)
			body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, notes/loot.txt, notes/heartbeat.txt]\n```\n"
			n := w.issue("Jump", body)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: thief})
			inputs := map[string]string{"INPUT_MAX-FIX-PASSES": "0"}
			for k, v := range c.inputs {
				inputs[k] = v
			}
			res := w.run("issue_comment", payload, inputs)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			if left := agentProcesses(t, w.AgentUID); len(left) > 0 {
				t.Fatalf("agent processes outlived the run: %v", left)
			}

			heartbeat, err := os.ReadFile(filepath.Join(w.Workspace, "notes", "heartbeat.txt"))
			if err != nil || !regexp.MustCompile(`scan readable=[1-9]`).Match(heartbeat) {
				t.Fatalf("control: the daemon never scanned /proc (%v):\n%s", err, heartbeat)
			}
			var seen []string
			add := func(where string, data []byte) {
				for _, bad := range []string{sandbox.BotToken, "GIT_CONFIG"} {
					if strings.Contains(string(data), bad) {
						seen = append(seen, fmt.Sprintf("%s holds %q", where, bad))
					}
				}
			}
			loot, _ := os.ReadFile(filepath.Join(w.Workspace, "notes", "loot.txt"))
			add("the workspace's notes/loot.txt", loot)
			// The pushed branch: every file and the whole history.
			clone := w.remote("studio/task-1")
			_ = filepath.WalkDir(clone, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					data, _ := os.ReadFile(p)
					add("pushed "+p, data)
				}
				return nil
			})
			logp, err := exec.Command("git", "-C", clone, "log", "-p", "--all").CombinedOutput()
			if err != nil {
				t.Fatal(err)
			}
			add("pushed history", logp)
			evidence := filepath.Join(w.RunnerTemp, "studio-runs")
			files := 0
			_ = filepath.WalkDir(evidence, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					data, _ := os.ReadFile(p)
					add("evidence "+p, data)
					files++
				}
				return nil
			})
			if files < 4 {
				t.Errorf("expected the run's evidence under %s, found %d files", evidence, files)
			}
			for _, s := range seen {
				t.Error(s)
			}
			if res.outputs["evidence-dir"] != evidence {
				t.Errorf("evidence-dir output = %q, want %q", res.outputs["evidence-dir"], evidence)
			}

			status := w.botComments(n)[0].Body
			summary, _ := w.Summary()
			wantContainment := fmt.Sprintf(c.line, w.AgentUID)
			if !strings.Contains(status, wantContainment) || !strings.Contains(summary, wantContainment) {
				t.Errorf("status comment and job summary must say %q:\n%s\n---\n%s", wantContainment, status, summary)
			}
			killed := regexp.MustCompile(`killed \d+ process(es)? the agent left running`)
			if c.counts && !killed.MatchString(status+summary) {
				t.Errorf("the run must report the killed daemon:\n%s\n---\n%s", status, summary)
			}
		})
	}
}

// TestEvidenceIgnoresPlantedLinks: the agent links the old evidence folder (inside the workspace)
// outside, and a link waits where the new one goes: nothing is written through either, and the
// evidence is complete in a real folder.
func TestEvidenceIgnoresPlantedLinks(t *testing.T) {
	requireRoot(t)
	w := newWorld(t, nil)
	outside := t.TempDir()
	for _, d := range []string{"old", "new"} {
		if err := os.MkdirAll(filepath.Join(outside, d), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(outside, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	runDir := filepath.Join(w.RunnerTemp, "studio-runs", "4242-gameplay-programmer")
	if err := os.MkdirAll(filepath.Dir(runDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "new"), runDir); err != nil {
		t.Fatal(err)
	}
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	plant := fmt.Sprintf("ln -s %s .codex/runs; ln -s %s %s 2>/dev/null; true", filepath.Join(outside, "old"), filepath.Join(outside, "new"), filepath.Join(w.RunnerTemp, "studio-runs", "4242-gameplay-programmer-review"))
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: plant})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if fi, err := os.Lstat(filepath.Join(w.RunnerTemp, "studio-runs", "4242-gameplay-programmer-review")); err == nil {
		t.Errorf("the agent could write the evidence folder: %v", fi.Mode())
	}
	for _, d := range []string{"old", "new"} {
		if entries, _ := os.ReadDir(filepath.Join(outside, d)); len(entries) != 0 {
			t.Errorf("evidence was written through the planted link into %s: %v", d, entries)
		}
	}
	fi, err := os.Lstat(runDir)
	if err != nil || !fi.IsDir() {
		t.Fatalf("the run folder must be a real directory: %v", err)
	}
	for _, f := range []string{"prompt.md", "metadata.json", "events.jsonl", "output.txt", "result.json", "steps/01-implementation/last-message.txt", "steps/01-implementation/events.jsonl"} {
		if fi, err := os.Lstat(filepath.Join(runDir, f)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("evidence %s: %v", f, err)
		}
	}
	if out, _ := os.ReadFile(filepath.Join(runDir, "output.txt")); !strings.Contains(string(out), "final status:") {
		t.Errorf("output.txt is incomplete:\n%s", out)
	}
}
