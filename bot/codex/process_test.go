package codex

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
)

// runGroup's sweep: a process that stays in the call's group after the call's own process exited
// is counted and killed; a call that leaves nothing behind counts none (groupMembers answers that
// from one kill(2) without reading /proc).
func TestRunGroupKillsWhatStaysInTheGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: groupMembers finds nothing here")
	}
	j := jail.Unconfined("test")
	dir := t.TempDir()

	clean := exec.Command("/bin/sh", "-c", "exit 0")
	if out := runGroup(context.Background(), clean, 0, time.Second, j, jail.Spec{}); out.ExitCode == nil || *out.ExitCode != 0 || out.Leftovers != 0 {
		t.Fatalf("clean call: exit %v, leftovers %d", out.ExitCode, out.Leftovers)
	}
	if got := groupMembers(clean.Process.Pid); len(got) != 0 {
		t.Fatalf("members of an ended group: %v", got)
	}

	pidFile := filepath.Join(dir, "straggler.pid")
	stray := exec.Command("/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 </dev/null & echo $! > "+pidFile+"; exit 0")
	out := runGroup(context.Background(), stray, 0, time.Second, j, jail.Spec{})
	if out.ExitCode == nil || *out.ExitCode != 0 || out.Leftovers != 1 {
		t.Fatalf("straggler: exit %v, leftovers %d, want 1", out.ExitCode, out.Leftovers)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i < 0 || !strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the straggler %d is still alive after the call: %s", pid, stat)
		}
	}
	if got := groupMembers(stray.Process.Pid); len(got) != 0 {
		t.Fatalf("members left in the group: %v", got)
	}
}
