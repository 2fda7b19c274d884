package codex

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// DefaultKillGrace is the seed's grace period (§8) between SIGTERM and SIGKILL.
const DefaultKillGrace = time.Second

// procOutcome is how a process group ended.
type procOutcome struct {
	ExitCode *int   // nil when killed by a signal or never started
	Signal   string // e.g. SIGKILL, when a signal ended it
	TimedOut bool
	Canceled bool  // the caller's context ended first
	StartErr error // the process could not be started
}

// runGroup starts cmd in its own process group and waits for it. When timeout passes (0 means no
// limit) or ctx ends, the whole group gets SIGTERM and, grace later, SIGKILL: the agent and the
// verification command both start children (shells, test runners, node launchers) that must not
// outlive the call.
func runGroup(ctx context.Context, cmd *exec.Cmd, timeout, grace time.Duration) procOutcome {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that leaves the group but keeps our pipes open must not block Wait forever.
	cmd.WaitDelay = grace + time.Second
	if err := cmd.Start(); err != nil {
		return procOutcome{StartErr: err}
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var expired <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	var out procOutcome
	var waitErr error
	select {
	case waitErr = <-done:
	case <-expired:
		out.TimedOut = true
		waitErr = stopGroup(pgid, grace, done)
	case <-ctx.Done():
		out.Canceled = true
		waitErr = stopGroup(pgid, grace, done)
	}
	// Reap stragglers that stayed in the group after the leader exited.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && cmd.ProcessState == nil {
		out.StartErr = waitErr
		return out
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		out.Signal = unix.SignalName(ws.Signal())
		return out
	}
	code := cmd.ProcessState.ExitCode()
	out.ExitCode = &code
	return out
}

func stopGroup(pgid int, grace time.Duration, done <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-done
	}
}

// tailBuffer keeps the last max bytes written, cut at a UTF-8 boundary: only the end of a long
// output explains a failure (seed §8 keeps the tail too).
type tailBuffer struct {
	max int
	buf []byte
}

func newTail(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the tail, dropping a leading partial rune the byte cut may have left.
func (t *tailBuffer) String() string {
	b := t.buf
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return string(b[i:])
		}
	}
	return string(b)
}
