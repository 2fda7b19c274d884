package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/jail"
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
	// Leftovers counts the processes still alive once the process itself had ended (its group's
	// stragglers and, for a confined call, every other process of the agent uid), all killed.
	Leftovers int
	// SweepErr is set when agent processes survived the kill (jail.ErrAgentAlive).
	SweepErr error
	// Limit is set when the call reached one of its per-call limits (memory, processes).
	Limit *jail.LimitHit
}

// startedCall is a jail call that must be told the pid of its process as soon as it started (the
// uid jail on cgroup v1 moves it into the call's cgroup then).
type startedCall interface {
	Started(pid int) error
}

// groupGoneLimit bounds the wait for a killed process group to be really gone.
const groupGoneLimit = 5 * time.Second

// runGroup starts cmd confined by j for one call reaching what spec names (for the sandbox: its
// own namespaces, a read-only host and the workspace; for the uid jail: the agent uid, the folders
// handed over) and waits for it. When timeout passes (0 means no limit) or ctx ends, the whole
// group gets SIGTERM and, grace later, SIGKILL: the agent and the verification command both start
// children (shells, test runners, node launchers) that must not outlive the call. Once the process
// has ended, the group's stragglers are killed and waited for until really gone, then the jail
// ends the call (the sandbox's init has killed its namespace; the uid jail sweeps whatever left
// the group, setsid daemons too); both are counted in Leftovers.
func runGroup(ctx context.Context, cmd *exec.Cmd, timeout, grace time.Duration, j jail.Jail, spec jail.Spec) procOutcome {
	cmd.SysProcAttr = nil
	call, err := j.Command(ctx, cmd, spec)
	if err != nil {
		return procOutcome{StartErr: err}
	}
	// A child that leaves the group but keeps our pipes open must not block Wait forever.
	cmd.WaitDelay = grace + time.Second
	if err := jail.Start(call, cmd); err != nil {
		_, _ = call.End(context.WithoutCancel(ctx))
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
	// Kill stragglers that stayed in the group after the leader exited, and wait until they are
	// really gone: SIGKILL is delivered asynchronously, and a caller that looks right away (or
	// uses a credential) must not find them still running.
	out.Leftovers = len(groupMembers(pgid))
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroupGone(pgid, groupGoneLimit)
	ended, err := call.End(context.WithoutCancel(ctx))
	out.Leftovers += ended.Leftovers
	out.Limit = ended.Limit
	var setup *jail.SetupError
	if errors.As(err, &setup) {
		out.StartErr = err
		return out
	}
	out.SweepErr = err

	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && cmd.ProcessState == nil {
		out.StartErr = waitErr
		return out
	}
	switch {
	case ended.Signal != "":
		// The sandbox's init saw the program die of a signal (it mirrors it as an exit code).
		out.Signal = ended.Signal
		return out
	case ended.ExitCode != nil:
		out.ExitCode = ended.ExitCode
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
		// The whole group was told to die: wait for it, so none of it counts as left running.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		err := <-done
		waitGroupGone(pgid, groupGoneLimit)
		return err
	}
}

// groupMembers lists the live (not zombie) processes whose process group is pgid, from
// /proc/<pid>/stat. Without /proc it finds none.
func groupMembers(pgid int) []int {
	// A group with no process at all, not even a zombie, has no member to find: one kill(2) with
	// signal 0 says so (ESRCH) without reading every /proc/<pid>/stat (about 1 ms at 70
	// processes), which is the usual case once a call's process has exited and been waited for.
	// Any other answer (success, or EPERM for another user's process) goes on to the scan.
	if pgid > 1 && errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so split after
		// the last ')'.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGroupGone polls until no live process is left in group pgid, at most limit.
func waitGroupGone(pgid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for len(groupMembers(pgid)) > 0 && time.Now().Before(deadline) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(2 * time.Millisecond)
	}
}

// tailBuffer keeps the last max bytes written, cut at a UTF-8 boundary: only the end of a long
// output explains a failure (seed §8 keeps the tail too).
type tailBuffer struct {
	max     int
	buf     []byte
	dropped int64 // bytes written before the tail kept
}

func newTail(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > t.max { // only p's end can be kept: never copy the rest
		t.dropped += int64(len(p) - t.max)
		p = p[len(p)-t.max:]
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return n, nil
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

// callError is a call's error from how its process ended, in the order both engines share: a
// process that did not start, a per-call limit the kernel enforced, agent processes that survived
// the sweep, the timeout, the caller's cancel, a handshake that failed (the app server's), the
// events not recorded, and then what Codex's own events say went wrong (checkProblem: the exec
// engine asks only of a process that exited 0). name is the command, for the start error.
func callError(ctx context.Context, name string, out procOutcome, timedOut, canceled bool, setupErr, closeErr error, checkProblem bool, req Request, res *Result) error {
	switch {
	case out.StartErr != nil:
		return fmt.Errorf("run %s: %w", name, out.StartErr)
	case out.Limit != nil:
		// Whatever Codex managed to say, the kernel killed (or starved) the call.
		return &LimitError{Hit: *out.Limit, Call: "the agent's call"}
	case out.SweepErr != nil:
		return out.SweepErr
	case timedOut:
		return fmt.Errorf("codex timed out after %s", req.Timeout)
	case canceled:
		return fmt.Errorf("codex canceled: %w", ctx.Err())
	case setupErr != nil:
		return setupErr
	case closeErr != nil:
		return fmt.Errorf("record codex events: %w", closeErr)
	case checkProblem:
		if p := res.Events.Problem(req.Writing(), res.FinalMessage); p != "" {
			return errors.New(p)
		}
	}
	return nil
}
