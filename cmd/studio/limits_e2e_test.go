package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// Issue 31, item 6: a call's memory and processes are bounded by a cgroup of its own. The studio
// runs in a memory cgroup of 1.5 GiB, standing in for a small runner's RAM, as the issue measured:
// there, an agent that filled /dev/shm and /tmp got the studio itself OOM-killed (no verdict, no
// job summary, the status comment stuck at "Codex running", the call's scratch folder left in
// the host's /tmp).

// smallRunner makes a memory cgroup of limit bytes (no swap) under the test's own, and returns
// the file a process writes 0 to to enter it and its peak usage so far.
func smallRunner(t *testing.T, limit int64) (procs string, peak func() int64) {
	t.Helper()
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("studio-e2e-runner-%d-%d", os.Getpid(), time.Now().UnixNano())
	var dir string
	var writes [][2]string
	var peakFile string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		// cgroup v2: under the root, which hands the memory controller on.
		dir = filepath.Join("/sys/fs/cgroup", name)
		writes = [][2]string{{"memory.max", strconv.FormatInt(limit, 10)}, {"memory.swap.max", "0"}}
		peakFile = "memory.peak"
	} else {
		var own string
		for _, line := range strings.Split(string(self), "\n") {
			if f := strings.SplitN(line, ":", 3); len(f) == 3 && strings.Contains(","+f[1]+",", ",memory,") {
				own = f[2]
			}
		}
		if own == "" {
			t.Fatalf("no memory cgroup holds the test:\n%s", self)
		}
		dir = filepath.Join("/sys/fs/cgroup/memory", own, name)
		writes = [][2]string{{"memory.limit_in_bytes", strconv.FormatInt(limit, 10)}, {"memory.memsw.limit_in_bytes", strconv.FormatInt(limit, 10)}}
		peakFile = "memory.max_usage_in_bytes"
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := syscall.Rmdir(dir)
			if err == nil || errors.Is(err, syscall.ENOENT) || time.Now().After(deadline) {
				return
			}
		}
	})
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil && !(w[0] != writes[0][0] && errors.Is(err, os.ErrNotExist)) {
			t.Fatalf("%s: %v", w[0], err)
		}
	}
	return filepath.Join(dir, "cgroup.procs"), func() int64 {
		data, _ := os.ReadFile(filepath.Join(dir, peakFile))
		n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		return n
	}
}

// enterCgroupEnv, in the environment of this test binary started again, names a cgroup.procs
// file: the process enters that cgroup and becomes the program its arguments name. A shell
// cannot be that step (it drops the INPUT_ variables, whose names hold dashes), and moving the
// studio after it started races its first reads of its own cgroup.
const enterCgroupEnv = "STUDIO_TEST_ENTER_CGROUP"

func init() {
	procs := os.Getenv(enterCgroupEnv)
	if procs == "" || len(os.Args) < 2 {
		return
	}
	if err := os.WriteFile(procs, []byte("0"), 0); err != nil {
		fmt.Fprintf(os.Stderr, "enter %s: %v\n", procs, err)
		os.Exit(125)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, enterCgroupEnv+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], env)
	fmt.Fprintf(os.Stderr, "exec %s: %v\n", os.Args[1], err)
	os.Exit(125)
}

// runStudioIn runs the built studio binary on the event inside the cgroup whose procs file is
// given, as the runner's step would: it is in the cgroup before its first instruction.
func (w *world) runStudioIn(procs, event string, payload []byte, extra map[string]string) (result, error) {
	w.t.Helper()
	bin, err := studioBin()
	if err != nil {
		w.t.Fatal(err)
	}
	env, err := w.Env(event, payload, extra)
	if err != nil {
		w.t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(self, bin, "action")
	cmd.Env = []string{enterCgroupEnv + "=" + procs}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	res := result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	res.outputs, _ = w.Outputs()
	w.scanForSecrets(res)
	return res, runErr
}

// agentLeftovers lists what the agent uid owns in the host's temporary places.
func agentLeftovers(uid int) []string {
	var left []string
	for _, dir := range []string{os.TempDir(), "/var/tmp", "/dev/shm"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
				left = append(left, filepath.Join(dir, e.Name()))
			}
		}
	}
	return left
}

func TestAgentThatExhaustsItsLimitsEndsWithAVerdict(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		// shell is the attack; it writes its stages to stderr.
		shell string
		// verify: the verification runs the attack (a script the agent wrote), not the agent.
		verify bool
		// note is what the verdict says.
		note []string
		// control is what the lifecycle shows of the attack, limited or not.
		control *regexp.Regexp
	}{
		{
			name:   "memory",
			inputs: map[string]string{"INPUT_AGENT-MEMORY": "256MiB"},
			shell: `df -k /dev/shm /tmp >&2
head -c 800M /dev/zero > /dev/shm/fill; echo "shm $?" >&2
head -c 800M /dev/zero > /tmp/fill; echo "tmp $?" >&2
head -c 1200M /dev/zero | tail -n 1 > /dev/null; echo "allocated $?" >&2`,
			note:    []string{"**Limit reached:** a call of the agent was killed at its memory limit (256 MiB)", "`agent-memory: 512MiB`"},
			control: regexp.MustCompile(`(?m)^\S+ +\d+ +\d+ +\d+ +\d+% /dev/shm$`),
		},
		{
			name:    "memory in the verification",
			inputs:  map[string]string{"INPUT_AGENT-MEMORY": "256MiB"},
			verify:  true,
			shell:   "df -k /dev/shm\nhead -c 800M /dev/zero > /dev/shm/fill\nhead -c 1200M /dev/zero | tail -n 1 > /dev/null\necho survived\n",
			note:    []string{"**Limit reached:** a call of the agent was killed at its memory limit (256 MiB)", "the verification was killed at its memory limit (256 MiB)"},
			control: regexp.MustCompile(`(?m)^\S+ +\d+ +\d+ +\d+ +\d+% /dev/shm$`),
		},
		{
			name:   "processes",
			inputs: map[string]string{"INPUT_AGENT-PIDS": "64"},
			shell: `i=0
while [ $i -lt 3000 ]; do sleep 100 & i=$((i+1)); done
echo "started $i" >&2`,
			note: []string{"**Limit reached:** a call of the agent could start no more processes at its process limit (64 processes)", "`agent-pids: 128`"},
			// The processes it left are counted, but where a bare PID namespace lets the kernel
			// kill them unseen: there the failed fork says it ran.
			control: regexp.MustCompile(`killed ([3-9]\d|\d{3,}) processes the agent left running|Cannot fork`),
		},
	} {
		for _, c := range containments {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				w := newWorld(t, nil)
				procs, peak := smallRunner(t, 3<<29)
				body, call := taskBody, fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: tc.shell}
				if tc.verify {
					body = "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/eat.sh]\nverify: {command: sh, args: [tests/eat.sh]}\n```\n"
					call = fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}, {Write: "tests/eat.sh", Content: tc.shell}}}
				}
				n := w.issue("Jump", body)
				_, payload := w.comment(n, sandbox.Writer, "/studio run")
				w.script(call)
				inputs := map[string]string{"INPUT_CODEX-PATH": fakeCodexBin, "INPUT_MAX-FIX-PASSES": "0"}
				for k, v := range tc.inputs {
					inputs[k] = v
				}
				for k, v := range c.inputs {
					inputs[k] = v
				}
				res, err := w.runStudioIn(procs, "issue_comment", payload, inputs)
				if len(w.invocations()) == 0 {
					t.Fatalf("control: the agent never ran (%v)\n%s\n%s", err, res.stdout, res.stderr)
				}
				if tc.inputs["INPUT_AGENT-MEMORY"] != "" && peak() < 200<<20 {
					t.Fatalf("control: the attack never took memory (peak %d MiB)", peak()>>20)
				}
				if err != nil && res.code != exitOK && res.code != exitError {
					t.Errorf("the studio did not survive its agent: %v\n%s\n%s", err, res.stdout, res.stderr)
				}
				if res.outputs["status"] != "blocked" {
					t.Errorf("status %q, want blocked\n%s\n%s", res.outputs["status"], res.stdout, res.stderr)
				}
				comments := w.botComments(n)
				if len(comments) == 0 {
					t.Fatal("no status comment")
				}
				status := comments[0].Body
				if !tc.control.MatchString(status) {
					t.Errorf("control: the attack's trace (%s) is not in the lifecycle:\n%s", tc.control, status)
				}
				t.Logf("peak memory of the small runner: %d MiB; the attack: %s", peak()>>20, tc.control.FindString(status))
				// Not stuck at "Codex running": the step failed, the run recorded its end.
				if !strings.Contains(status, "[ ] :x: Codex running") || !strings.Contains(status, "state=ended") {
					t.Errorf("the status comment does not record the run's end:\n%s", status)
				}
				for _, want := range append([]string{"Verdict: **blocked**"}, tc.note...) {
					if !strings.Contains(status, want) {
						t.Errorf("the status comment lacks %q:\n%s", want, status)
					}
				}
				if summary, err := w.Summary(); err != nil || !strings.Contains(summary, "Limit reached") {
					t.Errorf("the job summary does not name the limit (%v):\n%s", err, summary)
				}
				if left := agentLeftovers(w.AgentUID); len(left) > 0 {
					t.Errorf("the call left %v on the host", left)
					for _, l := range left {
						_ = os.RemoveAll(l)
					}
				}
			})
		}
	}
}
