package jail

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
)

// DefaultUser is the agent-user value that allocates a uid of the run's own (AutoUser).
const DefaultUser = AutoUser

// AutoUser asks Setup for a uid no other run on the host holds: one of AutoUIDCount uids from
// AutoUIDBase, leased under a host-wide lock for the life of the jail.
const AutoUser = "auto"

// DefaultSweepLimit bounds how long Sweep keeps killing before it gives up.
const DefaultSweepLimit = 10 * time.Second

// ErrAgentAlive is wrapped by CheckNoneLeft (and a Sweep that could not finish) when a process
// of the agent uid still lives.
var ErrAgentAlive = errors.New("agent processes are still running")

// ErrUIDInUse means another live run on this host holds the agent uid asked for.
var ErrUIDInUse = errors.New("the agent uid is in use by another run on this host")

// Mode is how agent processes are contained.
type Mode string

const (
	// ModeSandbox: namespaces of their own, a read-only host, the workspace through an idmapped
	// mount, private temporary places; nothing of a call outlives it.
	ModeSandbox Mode = "sandbox"
	// ModeUIDJail: the fallback. The agent runs as its own uid; the workspace is given to that
	// uid (lchown) for each call and back afterwards; leftovers are found by a uid sweep.
	ModeUIDJail Mode = "uid jail"
	// ModeUnconfined: the studio's own user, in a process group of its own.
	ModeUnconfined Mode = "unconfined"
)

// Layer is one defence and whether this run has it.
type Layer struct {
	ID     string // short and stable, for doctor's check ids
	Name   string
	Active bool
	// Note says what it does when active, or why it is missing.
	Note string
}

// Status says what containment agent processes get.
type Status struct {
	Mode     Mode
	Confined bool   // agent processes run as their own uid (sandbox or uid jail)
	User     string // account name, or the numeric uid when it has no passwd entry
	UID, GID int
	// Leased is set when the uid is the run's own, held under the host-wide lock.
	Leased       bool
	PIDNamespace bool // each call gets its own PID namespace
	// Reason is why unconfined, or why the uid jail replaced the sandbox.
	Reason string
	// NoPIDNamespace is why the uid jail has no PID namespace ("" when it has one).
	NoPIDNamespace string
	Layers         []Layer
	// Notes say what dead runs had left on the host (processes, folders handed over) and this
	// run's setup ended.
	Notes []string
}

// String is one line for logs, the status comment and the job summary.
func (s Status) String() string {
	if !s.Confined {
		return "unconfined: " + s.Reason
	}
	who := fmt.Sprintf("uid %d", s.UID)
	switch {
	case s.User == AutoUser:
		who = fmt.Sprintf("a uid of its own for each run (leased from %d)", s.UID)
	case s.User != "" && s.User != strconv.Itoa(s.UID):
		who += " (" + s.User + ")"
	case s.Leased:
		who += " (leased for this run)"
	}
	switch {
	case s.Mode == ModeSandbox:
		return "agent runs as " + who + " in a sandbox of its own for each call: " + s.activeLayers()
	case s.PIDNamespace:
		return "agent runs as " + who + " in its own PID namespace, in the uid jail (no sandbox: " + s.Reason + ")"
	default:
		return "agent runs as " + who + " in the uid jail (no sandbox: " + s.Reason + "); no PID namespace (" + s.NoPIDNamespace + "), leftovers are found by the uid sweep"
	}
}

// activeLayers names the active layers past the uid, comma-separated.
func (s Status) activeLayers() string {
	var names []string
	for _, l := range s.Layers {
		if l.Active && l.Name != LayerUID {
			names = append(names, l.Name)
		}
	}
	return strings.Join(names, ", ")
}

// Layer names, as `studio doctor` and docs/security.md list them.
const (
	LayerUID       = "own uid"
	LayerMountNS   = "mount namespace (read-only host, private /tmp, home and CODEX_HOME)"
	LayerPIDNS     = "PID namespace"
	LayerIPCUTS    = "IPC and UTS namespaces"
	LayerIdmap     = "idmapped workspace (no ownership changes)"
	LayerGitDir    = ".git thrown away after each call"
	LayerGitGuard  = ".git put back byte for byte after each call"
	LayerNoNewPriv = "no_new_privs"
	LayerRlimits   = "resource limits"
	LayerCgroup    = "a cgroup per call (memory and processes bounded)"
	LayerLifeline  = "dies with the studio"
	LayerSeccomp   = "system call filter (no set-id files or file capabilities)"
	LayerKeyring   = "kernel keyrings of the call's own"
	LayerNetwork   = "network namespace (only the studio's egress proxy)"
)

// Spec is what one confined process may reach.
type Spec struct {
	// Workdir is the one tree of the host the process may change (the workspace). What the
	// process does to its .git is thrown away (sandbox) or put back (uid jail) when it ends.
	Workdir string
	// Scratch is a folder of the call's own, created empty by the caller, that the process may
	// write and the studio reads afterwards (the final message; HOME and CODEX_HOME below it).
	// The caller removes it.
	Scratch string
	// Reach lists host paths the process must be able to read and run (the program and its
	// package, tool directories, folders its environment names): the sandbox binds read-only
	// what each needs where the host's private places would hide it, told apart by the
	// command's environment (a PATH entry, a toolchain's variable, another variable: reachDirs),
	// and takes out of the environment the variables naming what stays hidden (confineEnv); the
	// uid jail makes its ancestors traversable.
	Reach []string
	// Network, when set, gives a sandboxed call a network namespace of its own whose only way
	// out is the egress proxy listening on Network.Socket; nil leaves the host's network (the
	// uid jail always does: it cannot make a namespace).
	Network *Network
}

// Network is a sandboxed call's way out: inside its network namespace there is only loopback,
// where the call's init listens on EgressAddr (the proxy the call's HTTP(S)_PROXY names, and the
// model route) and on each Forward address, and hands every connection to the egress proxy's
// unix socket outside with a line naming the process that opened it.
type Network struct {
	// Socket is the egress proxy's unix socket on the host, in a folder only the studio reads.
	Socket string
	// Forward lists loopback address:port pairs (mirrors on the runner) that the call reaches at
	// the same address, each connection a tunnel the proxy decides on.
	Forward []string
}

// EgressPort is where a sandboxed call with a Network finds the egress proxy on its own loopback.
const EgressPort = 3128

// EgressAddr is EgressPort on the call's IPv4 loopback.
var EgressAddr = "127.0.0.1:" + strconv.Itoa(EgressPort)

// SetupError is a sandbox that could not start the call's program; the caller reports it as a
// start failure.
type SetupError struct {
	Stage, Msg string
}

func (e *SetupError) Error() string {
	if e.Stage == "exec" {
		return e.Msg
	}
	return "could not set up the agent's sandbox: " + e.Msg
}

// Ended is what the jail saw of a call once its process ended.
type Ended struct {
	// Leftovers counts the processes still alive when the call's process had ended, all killed.
	Leftovers int
	// ExitCode and Signal, when set, say how the agent's process ended where the process the
	// caller waited for was the sandbox's init (which mirrors the exit code, not a signal).
	ExitCode *int
	Signal   string
	// Limit is set when the call reached one of its per-call limits (its cgroup's).
	Limit *LimitHit
}

// Start starts cmd, prepared by Command for call; use it rather than cmd.Start: a call whose
// bounds apply as it starts (the uid jail's cgroup on v1) gets them before its program runs.
// After an error the process is not running; the caller still ends the call.
func Start(call Call, cmd *exec.Cmd) error {
	if s, ok := call.(starter); ok {
		return s.start(cmd)
	}
	return cmd.Start()
}

// starter is a call with its own way to start its process.
type starter interface{ start(cmd *exec.Cmd) error }

// Call is one confined process, from Command until End; its process is started with Start.
type Call interface {
	// End runs once the process has been waited for (or failed to start): it kills whatever the
	// call left running, waits until it is gone, puts back what the call was given, and says
	// what it saw. The error wraps ErrAgentAlive when a process survived.
	End(ctx context.Context) (Ended, error)
}

// Jail confines agent processes.
type Jail interface {
	// Command prepares cmd (Path, Args, Dir and Env as the agent's process should have them) to
	// run confined for one call reaching what s names. The caller starts cmd with Start (never
	// cmd.Start, cmd.Run or cmd.Output: the uid jail on cgroup v1 starts the process stopped and
	// moves it into its cgroup first), waits for it, then calls End on the returned Call, also
	// when Start failed.
	Command(ctx context.Context, cmd *exec.Cmd, s Spec) (Call, error)
	// CheckNoneLeft returns an error wrapping ErrAgentAlive, naming pids and commands, when any
	// agent process lives; call it before any step that touches a credential.
	CheckNoneLeft(ctx context.Context) error
	// Close gives back everything still given away and ends the jail (releasing its uid).
	Close(ctx context.Context) error
	Status() Status
}

// Sandbox says whether Setup should use the sandbox.
type Sandbox string

const (
	// SandboxAuto uses the sandbox where the host allows it, else the uid jail, said out loud.
	SandboxAuto Sandbox = "auto"
	// SandboxRequire refuses to set up anything less than the sandbox.
	SandboxRequire Sandbox = "require"
	// SandboxOff uses the uid jail.
	SandboxOff Sandbox = "off"
)

// ParseSandbox reads the agent-sandbox input: auto (the default), require or off.
func ParseSandbox(v string) (Sandbox, error) {
	switch s := Sandbox(strings.ToLower(strings.TrimSpace(v))); s {
	case "", SandboxAuto:
		return SandboxAuto, nil
	case SandboxRequire, SandboxOff:
		return s, nil
	}
	return "", fmt.Errorf("agent-sandbox %q must be auto, require or off", v)
}

// Options choose the agent account and the containment.
type Options struct {
	// User is the account name; empty or AutoUser allocates a uid of the run's own. A named
	// account is created (useradd --system) when missing.
	User string
	// UID and GID, when UID > 0, are used as they are, with no passwd entry needed (tests use a
	// unique uid each). GID 0 means UID.
	UID, GID int
	// Sandbox chooses between the sandbox and the uid jail; empty means SandboxAuto.
	Sandbox Sandbox
	// ProbePIDNamespace lets the uid jail use CLONE_NEWPID; without it the uid jail relies on
	// the sweep alone. The sandbox always has a PID namespace.
	ProbePIDNamespace bool
	// Workspace is the tree calls will write; the sandbox is probed on its filesystem (idmapped
	// mounts depend on it). Empty probes a temporary folder.
	Workspace string
	// Hide lists host paths the sandbox hides besides the defaults (homes, /root, the runner's
	// work and temp folders).
	Hide []string
	// LeaseDir holds the host-wide uid leases; empty means DefaultLeaseDir.
	LeaseDir string
	// SweepLimit bounds Sweep; 0 means DefaultSweepLimit.
	SweepLimit time.Duration
	// Memory bounds each call's memory, tmpfs included (agent-memory); 0 means DefaultMemory of
	// what the studio's cgroup or the host has.
	Memory int64
	// Processes bounds each call's processes, threads included (agent-pids); 0 means
	// DefaultProcesses.
	Processes int64
}

// Setup returns the jail for this process. Not running as root, or not on Linux, it returns an
// Unconfined jail (and no error) whose Status says so. As root it leases or finds the agent's
// uid (refusing uid 0, gid 0 and the studio's own uid), ends what dead runs left on the host,
// and probes the sandbox.
func Setup(ctx context.Context, opts Options) (Jail, error) {
	return setup(ctx, opts, true)
}

// Ready returns j's Status without waiting for a setup still running in the background (ok is
// false then): for a line written early in a run, which a later write completes.
func Ready(j Jail) (st Status, ok bool) {
	if d, isDeferred := j.(interface{ settled() bool }); isDeferred && !d.settled() {
		return Status{}, false
	}
	return j.Status(), true
}

// Inspect reports the Status Setup would give, without creating an account or keeping a lease
// (for `studio doctor`): a missing account is reported unconfined with the reason.
func Inspect(ctx context.Context, opts Options) (Status, error) {
	j, err := setup(ctx, opts, false)
	if err != nil {
		return Status{}, err
	}
	if i, ok := j.(interface{ inspected() }); ok {
		defer i.inspected()
	}
	return j.Status(), nil
}

// unconfined runs agent processes as the studio's own user, in their own process group.
type unconfined struct {
	reason string
	nested *nestedGitWatch
}

// Unconfined returns a Jail that only puts processes in their own process group (the caller
// kills the group), puts back the workspace's .git (and its nested ones) after each call, and
// reports Confined=false with reason.
func Unconfined(reason string) Jail { return unconfined{reason: reason, nested: &nestedGitWatch{}} }

func (u unconfined) Command(_ context.Context, cmd *exec.Cmd, s Spec) (Call, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	guard, err := guardGitDir(s.Workdir)
	if err != nil {
		return nil, err
	}
	nested, err := u.nested.begin(s.Workdir, true)
	if err != nil {
		guard.close()
		return nil, err
	}
	return guardOnly{guard, nested}, nil
}

// guardOnly is a call whose only duty at its end is putting the workspace's .git entries back.
type guardOnly struct {
	guard  *gitGuard
	nested *nestedGitCall
}

func (g guardOnly) End(context.Context) (Ended, error) {
	return Ended{}, errors.Join(g.guard.restore(), g.nested.end())
}

func (unconfined) CheckNoneLeft(context.Context) error { return nil }
func (unconfined) Close(context.Context) error         { return nil }
func (u unconfined) Status() Status {
	return Status{Mode: ModeUnconfined, Reason: u.reason, UID: os.Getuid(), GID: os.Getgid()}
}
