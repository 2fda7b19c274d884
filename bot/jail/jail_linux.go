package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"sync"
	"syscall"
)

func setup(ctx context.Context, opts Options, create bool) (Jail, error) {
	if os.Geteuid() != 0 {
		return Unconfined("the studio is not root, so the agent runs as the studio's own user; run the action as root (the Docker action does) to confine it"), nil
	}
	j := &confined{limit: opts.SweepLimit, reclaim: map[string]owner{}}
	if j.limit <= 0 {
		j.limit = DefaultSweepLimit
	}
	if opts.UID > 0 {
		j.uid, j.gid, j.user = opts.UID, opts.GID, strconv.Itoa(opts.UID)
		if j.gid <= 0 {
			j.gid = opts.UID
		}
	} else {
		name := opts.User
		if name == "" {
			name = DefaultUser
		}
		u, err := lookupOrCreate(ctx, name, create)
		var missing user.UnknownUserError
		if errors.As(err, &missing) {
			return Unconfined(fmt.Sprintf("the agent user %s does not exist yet; the action creates it (useradd --system) when it runs", name)), nil
		}
		if err != nil {
			return nil, err
		}
		j.user = name
		if j.uid, err = strconv.Atoi(u.Uid); err != nil {
			return nil, fmt.Errorf("agent user %s: uid %q: %w", name, u.Uid, err)
		}
		if j.gid, err = strconv.Atoi(u.Gid); err != nil {
			return nil, fmt.Errorf("agent user %s: gid %q: %w", name, u.Gid, err)
		}
	}
	switch {
	case j.uid == 0 || j.gid == 0:
		return nil, fmt.Errorf("agent user %s has uid %d, gid %d: the agent must not run as root or in group 0", j.user, j.uid, j.gid)
	case j.uid == os.Getuid() || j.uid == os.Geteuid():
		return nil, fmt.Errorf("agent user %s has the studio's own uid %d: the agent needs a uid of its own", j.user, j.uid)
	}
	if opts.ProbePIDNamespace {
		if err := probePIDNamespace(); err != nil {
			j.reason = "creating a PID namespace failed: " + err.Error()
		} else {
			j.pidns = true
		}
	} else {
		j.reason = "PID namespaces were not probed"
	}
	return j, nil
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
