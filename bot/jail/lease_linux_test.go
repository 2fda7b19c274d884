package jail

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestLeasesAreTheRunsOwn(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	a, err := allocate(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := allocate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.uid == b.uid || a.uid != AutoUIDBase || b.uid != AutoUIDBase+1 {
		t.Errorf("uids %d and %d: want the two lowest, distinct", a.uid, b.uid)
	}
	if _, err := tryLease(dir, a.uid); !errors.Is(err, ErrUIDInUse) {
		t.Errorf("a held lease taken again: %v", err)
	}
	a.release()
	c, err := allocate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.uid != AutoUIDBase {
		t.Errorf("a released uid is not reused: got %d", c.uid)
	}
	c.release()
	b.release()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("released leases left files behind: %v", entries)
	}
}

// A uid jail whose run died (its lease dropped with the process) left a daemon running as its
// uid and a folder handed over: the next run that takes the lease kills the one and gives back
// the other, and says so.
func TestADeadRunsLeftoversAreEndedByTheNext(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	uid := 200000 + os.Getpid()%99000
	j, err := Setup(context.Background(), Options{UID: uid, Sandbox: SandboxOff, LeaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	dead := j.(*uidJail)
	ws := filepath.Join(t.TempDir(), "ws")
	mustWrite(t, filepath.Join(ws, "f"), "x", 0o644)
	if err := dead.Handover(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	daemon := exec.Command("/bin/sleep", "300")
	if err := dead.Confine(daemon); err != nil {
		t.Fatal(err)
	}
	daemon.SysProcAttr.Setsid, daemon.SysProcAttr.Setpgid = true, false
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	go daemon.Wait()
	dead.id.lease.f.Close() // the run dies: the kernel drops its lock, its file stays

	next, err := Setup(context.Background(), Options{UID: uid, Sandbox: SandboxOff, LeaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(context.Background())
	notes := strings.Join(next.Status().Notes, "; ")
	if !strings.Contains(notes, "killed 1 process") || !strings.Contains(notes, "gave back 1 folder") {
		t.Errorf("notes = %q", notes)
	}
	if err := checkUID(uid); err != nil {
		t.Error(err)
	}
	for _, p := range []string{ws, filepath.Join(ws, "f")} {
		if got := ownerAt(t, p, true); got != (owner{0, 0}) {
			t.Errorf("%s owned by %v after the next run's setup", p, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(uid)+".journal")); err == nil {
		t.Error("the journal was left")
	}
	_ = syscall.Kill(daemon.Process.Pid, syscall.SIGKILL)
}
