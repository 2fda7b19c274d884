package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

func setup(ctx context.Context, opts Options, create bool) (Jail, error) {
	if os.Geteuid() != 0 {
		return Unconfined("the studio is not root, so the agent runs as the studio's own user; run the action as root (the composite action uses the runner's sudo) to confine it"), nil
	}
	mode := opts.Sandbox
	if mode == "" {
		mode = SandboxAuto
	}
	dir := opts.LeaseDir
	if dir == "" {
		dir = DefaultLeaseDir
	}
	id, notes, err := agentIdentity(ctx, opts, dir, create)
	var missing user.UnknownUserError
	if errors.As(err, &missing) {
		return Unconfined(fmt.Sprintf("the agent user %s does not exist yet; the action creates it (useradd --system) when it runs", opts.User)), nil
	}
	if err != nil {
		return nil, err
	}
	if create && mode == SandboxAuto {
		// The probe takes a few process starts; a run has other work before its first call
		// (authorization, the checkout), so the probe runs beside it. require stays synchronous:
		// its answer may be "do not start".
		d := &deferred{ready: make(chan struct{})}
		go func() {
			defer close(d.ready)
			d.jail, d.err = contain(context.WithoutCancel(ctx), opts, mode, dir, id, notes, create)
		}()
		return d, nil
	}
	return contain(ctx, opts, mode, dir, id, notes, create)
}

// contain gives the agent its containment: the sandbox, or the uid jail where the host cannot
// give one (auto) or it is not wanted (off).
func contain(ctx context.Context, opts Options, mode Sandbox, dir string, id identity, notes []string, create bool) (Jail, error) {
	sandboxReason := "agent-sandbox is off"
	if mode != SandboxOff {
		sb, why := newSandbox(ctx, id, opts, create)
		if sb != nil {
			sb.notes = notes
			return sb, nil
		}
		if mode == SandboxRequire {
			id.lease.release()
			return nil, fmt.Errorf("agent-sandbox is require, but this host cannot give the agent a sandbox: %s", why)
		}
		sandboxReason = why
	}
	// The uid jail sweeps every process of its uid: sharing the uid with a live run would kill
	// that run's agents.
	if id.lease == nil && create {
		l, err := tryLease(dir, id.uid)
		if errors.Is(err, ErrUIDInUse) {
			return nil, fmt.Errorf("agent-user %s (uid %d) is in use by another run on this host, and without a sandbox the runs would kill each other's agents: use agent-user: auto", id.user, id.uid)
		}
		if err == nil {
			id.lease = l
		}
	}
	j := &uidJail{id: id, limit: opts.SweepLimit, reclaim: map[string]owner{}, sandboxReason: sandboxReason, notes: notes, limits: newCallLimits(opts, create)}
	_, j.never = privateHostPlaces(opts.Hide)
	j.noSession = "probed when a run starts"
	if create {
		if j.noSession = probeFreshSession(id); j.noSession == "" {
			j.freshSession = true
		}
	}
	if opts.ProbePIDNamespace {
		if err := probePIDNamespace(); err != nil {
			j.pidnsReason = "creating a PID namespace failed: " + err.Error()
		} else {
			j.pidns = true
		}
	} else {
		j.pidnsReason = "PID namespaces were not probed"
	}
	return j, nil
}

// deferred is a jail whose setup runs in the background: every method waits for it, but for a
// check that no agent process lives before any call was made (the checkout's fetch asks early):
// until then nothing of this jail can be alive (the setup already ended what dead runs left).
type deferred struct {
	ready chan struct{}
	jail  Jail
	err   error
	used  atomic.Bool
}

func (d *deferred) wait() (Jail, error) {
	<-d.ready
	return d.jail, d.err
}

func (d *deferred) Command(ctx context.Context, cmd *exec.Cmd, s Spec) (Call, error) {
	d.used.Store(true)
	j, err := d.wait()
	if err != nil {
		return nil, err
	}
	return j.Command(ctx, cmd, s)
}

func (d *deferred) CheckNoneLeft(ctx context.Context) error {
	if !d.used.Load() {
		return nil
	}
	j, err := d.wait()
	if err != nil {
		return nil // nothing could run: there is nothing left
	}
	return j.CheckNoneLeft(ctx)
}

func (d *deferred) Close(ctx context.Context) error {
	j, err := d.wait()
	if err != nil {
		return nil
	}
	return j.Close(ctx)
}

func (d *deferred) Status() Status {
	j, err := d.wait()
	if err != nil {
		return Status{Mode: ModeUnconfined, Reason: "the agent could not be confined: " + err.Error(), UID: os.Getuid(), GID: os.Getgid()}
	}
	return j.Status()
}

func (d *deferred) settled() bool {
	select {
	case <-d.ready:
		return true
	default:
		return false
	}
}

// agentIdentity decides the agent's uid: a leased one of its own (auto), a named account (found
// or created) or a number as it is. Taking a lease first ends what a dead run left on the host.
func agentIdentity(ctx context.Context, opts Options, dir string, create bool) (identity, []string, error) {
	var id identity
	var notes []string
	auto := opts.UID <= 0 && (opts.User == "" || strings.EqualFold(opts.User, AutoUser))
	switch {
	case opts.UID > 0:
		id.uid, id.gid, id.user = opts.UID, opts.GID, strconv.Itoa(opts.UID)
		if id.gid <= 0 {
			id.gid = opts.UID
		}
	case auto && !create:
		// What a run would get, without holding a uid: doctor's view.
		id.uid, id.gid, id.user = AutoUIDBase, AutoUIDBase, AutoUser
	case auto:
		if err := openLeaseDir(dir); err != nil {
			return id, nil, err
		}
		stale, err := recoverStale(dir, func(uid int) (int, error) { return sweepUID(ctx, uid, opts.SweepLimit) })
		notes = append(notes, stale...)
		if err != nil {
			return id, notes, fmt.Errorf("end what dead runs left on this host: %w", err)
		}
		l, err := allocate(dir)
		if err != nil {
			return id, notes, err
		}
		id.uid, id.gid, id.user, id.lease, id.allocated = l.uid, l.uid, strconv.Itoa(l.uid), l, true
	default:
		u, err := lookupOrCreate(ctx, opts.User, create)
		if err != nil {
			return id, nil, err
		}
		id.user = opts.User
		if id.uid, err = strconv.Atoi(u.Uid); err != nil {
			return id, nil, fmt.Errorf("agent user %s: uid %q: %w", opts.User, u.Uid, err)
		}
		if id.gid, err = strconv.Atoi(u.Gid); err != nil {
			return id, nil, fmt.Errorf("agent user %s: gid %q: %w", opts.User, u.Gid, err)
		}
	}
	switch {
	case id.uid == 0 || id.gid == 0:
		return id, nil, fmt.Errorf("agent user %s has uid %d, gid %d: the agent must not run as root or in group 0", id.user, id.uid, id.gid)
	case id.uid == os.Getuid() || id.uid == os.Geteuid():
		return id, nil, fmt.Errorf("agent user %s has the studio's own uid %d: the agent needs a uid of its own", id.user, id.uid)
	}
	if id.lease == nil && create && opts.UID > 0 {
		// A fixed uid (tests give each world its own) is leased too when free, so that what a
		// dead run left under it is ended before this run uses it.
		if err := openLeaseDir(dir); err == nil {
			if l, err := tryLease(dir, id.uid); err == nil {
				note, rerr := l.recover(func(uid int) (int, error) { return sweepUID(ctx, uid, opts.SweepLimit) })
				if note != "" {
					notes = append(notes, note)
				}
				if rerr != nil {
					l.release()
					return id, notes, rerr
				}
				id.lease = l
			}
		}
	}
	return id, notes, nil
}

func lookupOrCreate(ctx context.Context, name string, create bool) (*user.User, error) {
	u, err := user.Lookup(name)
	if err == nil {
		return u, nil
	}
	var unknown user.UnknownUserError
	if !errors.As(err, &unknown) {
		return nil, fmt.Errorf("look up agent user %s: %w", name, err)
	}
	if !create {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, "useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("create agent user %s (useradd): %v: %s", name, err, out)
	}
	if u, err = user.Lookup(name); err != nil {
		return nil, fmt.Errorf("look up agent user %s after useradd: %w", name, err)
	}
	return u, nil
}

var (
	probeOnce sync.Once
	probeErr  error
)

// probePIDNamespace starts /bin/true (or /usr/bin/true) in a new PID namespace, once per
// process. Docker without CAP_SYS_ADMIN answers EPERM.
func probePIDNamespace() error {
	probeOnce.Do(func() {
		bin := "/bin/true"
		if _, err := os.Stat(bin); err != nil {
			bin = "/usr/bin/true"
		}
		cmd := exec.Command(bin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
		probeErr = cmd.Run()
	})
	return probeErr
}
