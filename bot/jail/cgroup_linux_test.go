package jail

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// newLimitedSandbox is a sandbox whose calls get memory and processes bounds.
func newLimitedSandbox(t *testing.T, ws string, memory, processes int64) *sandbox {
	t.Helper()
	requireRoot(t)
	j, err := Setup(context.Background(), Options{Sandbox: SandboxRequire, Workspace: ws, Memory: memory, Processes: processes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close(context.Background()) })
	sb, ok := j.(*sandbox)
	if !ok {
		t.Fatalf("Setup(require) gave %T", j)
	}
	if sb.limits.cg == nil {
		t.Fatalf("this host must give calls a cgroup (CI does): %s", sb.limits.why)
	}
	return sb
}

// callCgroupsLeft lists the cgroups of this process's calls still on the host.
func callCgroupsLeft(t *testing.T, sb *sandbox) []string {
	t.Helper()
	var left []string
	for _, parent := range sb.limits.cg.parents() {
		m, err := filepath.Glob(filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid())+"-*"))
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, m...)
	}
	return left
}

// TestCallCgroupBoundsMemory: a scripted agent fills /dev/shm and /tmp and then allocates memory
// (tail holds a line without an end); the call is killed at its memory limit, the jail says so,
// the tmpfs were sized to the budget, and no cgroup of the call is left.
func TestCallCgroupBoundsMemory(t *testing.T) {
	ws := t.TempDir()
	const budget = 192 << 20
	sb := newLimitedSandbox(t, ws, budget, 256)
	if st := sb.Status(); !strings.Contains(st.String(), LayerCgroup) {
		t.Errorf("the status does not name the cgroup layer: %s", st)
	}
	// Bounded, so that on a host without the limit the test costs 700 MiB, not the host.
	out, ended := limitedCall(t, sb, ws, `
df -k /dev/shm /tmp /var/tmp | tail -n +2
head -c 120M /dev/zero > /dev/shm/fill && echo FILLED-SHM
head -c 120M /dev/zero > /tmp/fill; echo TMP-WRITE-DONE
head -c 700M /dev/zero | tail -n 1 >/dev/null && echo ALLOCATED-700M
echo SURVIVED`)
	t.Logf("%s\nended: %+v", out, ended)
	if !strings.Contains(out, "FILLED-SHM") {
		t.Fatalf("control: the agent could not even fill /dev/shm:\n%s", out)
	}
	if strings.Contains(out, "ALLOCATED-700M") {
		t.Errorf("the agent held 700 MiB beside 240 MiB of tmpfs under a %s budget", FormatBytes(budget))
	}
	if ended.Limit == nil || ended.Limit.Resource != LimitMemory || ended.Limit.Value != budget {
		t.Errorf("the jail did not say the call reached its memory limit: %+v", ended.Limit)
	}
	if kb := strconv.Itoa(budget >> 10); len(regexp.MustCompile(`(?m)^\S+\s+`+kb+`\s`).FindAllString(out, -1)) != 3 {
		t.Errorf("/dev/shm, /tmp and /var/tmp are not sized to the budget (%s KiB each):\n%s", kb, out)
	}
	if left := callCgroupsLeft(t, sb); len(left) > 0 {
		t.Errorf("the call's cgroups outlived it: %v", left)
	}
}

// TestCallCgroupBoundsProcesses: a bounded fork bomb stops at agent-pids, the jail names the
// limit, and nothing of it outlives the call.
func TestCallCgroupBoundsProcesses(t *testing.T) {
	ws := t.TempDir()
	sb := newLimitedSandbox(t, ws, 512<<20, 64)
	// Each started sleep is counted by the shell's builtin echo (no fork), in the workspace.
	out, ended := limitedCall(t, sb, ws, `
i=0
while [ $i -lt 1000 ]; do sleep 100 & echo >> started; i=$((i+1)); done`)
	data, _ := os.ReadFile(filepath.Join(ws, "started"))
	started := strings.Count(string(data), "\n")
	t.Logf("%s\nstarted %d; ended: %+v", out, started, ended)
	if started < 10 {
		t.Fatalf("control: the fork bomb did not run:\n%s", out)
	}
	if started > 64 {
		t.Errorf("the call started %d processes under agent-pids 64", started)
	}
	if ended.Limit == nil || ended.Limit.Resource != LimitProcesses || ended.Limit.Value != 64 {
		t.Errorf("the jail did not say the call reached its process limit: %+v", ended.Limit)
	}
	if left := callCgroupsLeft(t, sb); len(left) > 0 {
		t.Errorf("the call's cgroups outlived it: %v", left)
	}
	// A call within its limits is not said to have reached one.
	if _, ended := sandboxed(t, sb, ws, "true"); ended.Limit != nil {
		t.Errorf("a call within its limits reached %+v", ended.Limit)
	}
}

// TestCallInitIsTheOOMKillersFirstChoice: whatever limit is reached (a small runner's RAM), the
// kernel kills the call, never the studio.
func TestCallInitIsTheOOMKillersFirstChoice(t *testing.T) {
	ws := t.TempDir()
	sb := newLimitedSandbox(t, ws, 256<<20, 256)
	out, _ := sandboxed(t, sb, ws, `cat /proc/self/oom_score_adj`)
	if strings.TrimSpace(out) != "1000" {
		t.Errorf("the agent's oom_score_adj is %q, not 1000", out)
	}
}

// limitedCall runs script in the sandbox like sandboxed, but for a call the kernel may kill
// whole, its init included (no report then: the jail's Ended still says which limit it reached).
func limitedCall(t *testing.T, j Jail, ws, script string) (string, Ended) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, runErr := confinedOutput(call, cmd, true)
	ended, err := call.End(context.Background())
	if err != nil {
		t.Fatalf("end: %v", err)
	}
	if runErr != nil {
		t.Logf("the call's init: %v", runErr)
	}
	return string(out), ended
}

// TestUIDJailCallsGetACgroupToo: the fallback bounds a call the same way (on v1, the agent is
// started stopped and runs once it is in its cgroup: not one fork escapes it).
func TestUIDJailCallsGetACgroupToo(t *testing.T) {
	requireRoot(t)
	uid := 200000 + rand.IntN(99000)
	j, err := Setup(context.Background(), Options{UID: uid, Sandbox: SandboxOff, ProbePIDNamespace: true, Memory: 192 << 20, Processes: 64})
	if err != nil {
		t.Fatal(err)
	}
	u := j.(*uidJail)
	t.Cleanup(func() { u.Close(context.Background()) })
	if u.limits.cg == nil {
		t.Fatalf("this host must give calls a cgroup (CI does): %s", u.limits.why)
	}
	if l := u.cgroupLayer(); !l.Active || !strings.Contains(l.Note, "/dev/shm are not size-bounded") {
		t.Errorf("the uid jail's cgroup layer does not say what it cannot bound: %+v", l)
	}
	run := func(script string) (string, int, Ended) {
		t.Helper()
		ws := t.TempDir()
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = ws
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
		call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := Start(call, cmd); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		ended, err := call.End(context.Background())
		if err != nil {
			t.Fatalf("end: %v", err)
		}
		data, _ := os.ReadFile(filepath.Join(ws, "started"))
		return out.String(), strings.Count(string(data), "\n"), ended
	}
	out, started, ended := run(`echo >> started; head -c 700M /dev/zero | tail -n 1 >/dev/null && echo ALLOCATED-700M`)
	t.Logf("memory: %s %+v", out, ended.Limit)
	if started != 1 || strings.Contains(out, "ALLOCATED-700M") {
		t.Errorf("the agent was not stopped at 192 MiB (or never ran):\n%s", out)
	}
	if ended.Limit == nil || ended.Limit.Resource != LimitMemory {
		t.Errorf("the jail did not say the call reached its memory limit: %+v", ended.Limit)
	}
	out, started, ended = run(`i=0; while [ $i -lt 1000 ]; do sleep 100 & echo >> started; i=$((i+1)); done`)
	if started < 10 || started > 64 {
		t.Errorf("the fork bomb started %d processes under agent-pids 64:\n%s", started, out)
	}
	if ended.Limit == nil || ended.Limit.Resource != LimitProcesses {
		t.Errorf("the jail did not say the call reached its process limit: %+v", ended.Limit)
	}
	for _, parent := range u.limits.cg.parents() {
		if m, _ := filepath.Glob(filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid())+"-*")); len(m) > 0 {
			t.Errorf("the calls' cgroups outlived them: %v", m)
		}
	}
}
