package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// DefaultUser is the account agent processes run as when Options.User is empty.
const DefaultUser = "studio-agent"

// DefaultSweepLimit bounds how long Sweep keeps killing before it gives up.
const DefaultSweepLimit = 10 * time.Second

// ErrAgentAlive is wrapped by CheckNoneLeft (and a Sweep that could not finish) when a process
// of the agent uid still lives.
var ErrAgentAlive = errors.New("agent processes are still running")

// Status says what containment agent processes get.
type Status struct {
	Confined     bool   // agent processes run as their own uid
	User         string // account name, or the numeric uid when it has no passwd entry
	UID, GID     int
	PIDNamespace bool   // each call gets its own PID namespace
	Reason       string // why unconfined, or what is missing when confined without a PID namespace
}

// String is one line for logs, the status comment and `studio doctor`.
func (s Status) String() string {
	if !s.Confined {
		return "unconfined: " + s.Reason
	}
	who := fmt.Sprintf("uid %d", s.UID)
	if s.User != "" && s.User != strconv.Itoa(s.UID) {
		who += " (" + s.User + ")"
	}
	if s.PIDNamespace {
		return "agent runs as " + who + " in its own PID namespace"
	}
	return "agent runs as " + who + "; no PID namespace (" + s.Reason + "), leftovers are found by the uid sweep"
}

// Jail confines agent processes. Handover, Reclaim and Sweep must not run while an agent call
// is in progress: they assume every agent process is the caller's to judge.
type Jail interface {
	// Confine prepares cmd before Start: the agent's uid and gid with no supplementary groups,
	// its own process group, and CLONE_NEWPID when available.
	Confine(cmd *exec.Cmd) error
	// Sweep SIGKILLs every process of the agent uid until none is left (bounded) and returns
	// how many it killed; the error wraps ErrAgentAlive when some survived the bound.
	Sweep(ctx context.Context) (killed int, err error)
	// CheckNoneLeft returns an error wrapping ErrAgentAlive, naming pids and commands, when any
	// agent-uid process lives.
	CheckNoneLeft(ctx context.Context) error
	// Handover gives directories to the agent: lchown -R to the agent uid/gid (entries it
	// already owns are skipped) and o+x on each ancestor that lacks it, remembering old owners
	// and modes. Symbolic links are changed, never followed.
	Handover(ctx context.Context, paths ...string) error
	// Expose makes the given paths reachable by the agent without giving them away: o+x on each
	// ancestor directory that lacks it (restored by Reclaim). The Codex binary of a checkout in a
	// private directory needs it.
	Expose(ctx context.Context, paths ...string) error
	// Reclaim gives everything handed over back to its original owner (what the agent created
	// goes to the owner of the handed-over directory) and restores the ancestors' modes.
	Reclaim(ctx context.Context) error
	Status() Status
}

// Options choose the agent account.
type Options struct {
	// User is the account name; empty means DefaultUser. It is created (useradd --system) when
	// missing.
	User string
	// UID and GID, when UID > 0, are used as they are, with no passwd entry needed (tests use a
	// unique uid each, so parallel test processes never sweep each other). GID 0 means UID.
	UID, GID int
	// ProbePIDNamespace tries CLONE_NEWPID once; without it no PID namespace is used.
	ProbePIDNamespace bool
	// SweepLimit bounds Sweep; 0 means DefaultSweepLimit.
	SweepLimit time.Duration
}

// Setup returns the jail for this process. Not running as root, or not on Linux, it returns an
// Unconfined jail (and no error) whose Status says so. As root it finds or creates the account, refuses uid 0,
// gid 0 and the studio's own uid, and probes the PID namespace.
func Setup(ctx context.Context, opts Options) (Jail, error) {
	return setup(ctx, opts, true)
}

// Inspect reports the Status Setup would give, without creating the account (for `studio
// doctor`): a missing account is reported unconfined with the reason.
func Inspect(ctx context.Context, opts Options) (Status, error) {
	j, err := setup(ctx, opts, false)
	if err != nil {
		return Status{}, err
	}
	return j.Status(), nil
}

// unconfined runs agent processes as today: the studio's own user, in their own process group.
type unconfined struct{ reason string }

// Unconfined returns a Jail that only puts processes in their own process group (the caller
// kills the group) and reports Confined=false with reason.
func Unconfined(reason string) Jail { return unconfined{reason: reason} }

func (u unconfined) Confine(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return nil
}

func (unconfined) Sweep(context.Context) (int, error)        { return 0, nil }
func (unconfined) CheckNoneLeft(context.Context) error       { return nil }
func (unconfined) Handover(context.Context, ...string) error { return nil }
func (unconfined) Expose(context.Context, ...string) error   { return nil }
func (unconfined) Reclaim(context.Context) error             { return nil }
func (u unconfined) Status() Status {
	return Status{Reason: u.reason, UID: os.Getuid(), GID: os.Getgid()}
}
