// Package jail runs agent processes (Codex and the verification command it influences) as an
// unprivileged user in their own PID namespace, and makes sure none of them outlive their call.
//
// The API is narrow on purpose:
//
//	Setup(ctx, Options) (Jail, error)  pick or create the agent user, probe CLONE_NEWPID once
//	Unconfined(reason) Jail            today's behaviour (own process group), reported as such
//	Jail.Confine(cmd)                  before cmd.Start: agent uid/gid, no supplementary groups,
//	                                   its own process group and, when available, PID namespace
//	Jail.Handover(ctx, paths...)       give directories to the agent uid (lchown -R) and make
//	                                   their ancestors traversable (o+x), remembering what changed
//	Jail.Sweep(ctx)                    SIGKILL every process of the agent uid until none is left
//	Jail.CheckNoneLeft(ctx)            ErrAgentAlive when an agent process still lives; call it
//	                                   before any step that touches a credential
//	Jail.Reclaim(ctx)                  give everything handed over back, restore ancestor modes
//	Jail.Status()                      what containment this run has, and why not more
//
// Why two mechanisms. The PID namespace makes Codex the namespace's init: when it exits, the
// kernel kills every process left in the namespace, double-forked setsid daemons included, and
// the studio's Wait only returns once they are gone. Docker containers without CAP_SYS_ADMIN
// cannot create one, so the uid sweep is the mechanism that always works: the agent runs as a
// uid nothing else uses, every process with that uid (real, effective, saved or filesystem, from
// /proc/<pid>/status) is the agent's, and the sweep kills them in a loop until a scan finds none.
// The sweep is also the check before credentials are used (CheckNoneLeft). Running as another
// uid is what keeps the agent out of /proc/<pid>/environ of the studio and its git processes.
//
// Rejected alternatives: a child subreaper (PR_SET_CHILD_SUBREAPER) is per process and the
// studio's tests run many runs in one process, so orphans of one run would be reaped (and
// counted) by another; cgroups need a delegated, writable hierarchy that neither GitHub-hosted
// runners nor Docker actions give by default.
//
// Confinement needs root (to switch uid and chown). Setup as another user returns an Unconfined
// jail whose Status says why; a sudo-based path for non-root runners may come later.
//
// Confinement is Linux's (jail_linux.go, confined_linux.go): both mechanisms need Linux. On
// macOS (jail_other.go) Setup always returns an Unconfined jail with MacOSReason.
package jail
