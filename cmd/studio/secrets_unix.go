//go:build linux || darwin

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// hideSecrets makes sure no secret stays in this process's initial environment block (Linux's
// /proc/<pid>/environ, macOS's KERN_PROCARGS2, what `ps eww` shows) and returns the
// getenv the action must use. With secrets in the environment it does not return on success: it
// re-executes the binary (same pid, new image and environment block), and the new process
// receives them from the pipe named by STUDIO_SECRETS_FD. Any failure is an error: running on
// with the secrets readable would silently lose the protection.
func hideSecrets() (func(string) string, error) {
	environ := os.Environ()
	if fd, ok := os.LookupEnv(secretsFDVar); ok {
		return receiveSecrets(fd, environ)
	}
	keep, secrets := splitEnv(environ)
	if len(secrets) == 0 {
		return os.Getenv, nil
	}
	return nil, reexec(keep, secrets)
}

// reexec hands secrets over through a pipe and replaces the process image with the same binary
// under the environment keep. It returns only on failure.
func reexec(keep []string, secrets map[string]string) error {
	data, err := json.Marshal(secrets)
	if err != nil {
		return fmt.Errorf("encode secrets for the re-exec: %w", err)
	}
	if len(data) > maxSecretsBytes {
		return fmt.Errorf("secret-bearing environment variables hold %d bytes, more than the %d the re-exec hands over", len(data), maxSecretsBytes)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("create the secrets pipe: %w", err)
	}
	defer r.Close()
	// Nobody reads before exec, so a write larger than the buffer would block for ever.
	size, err := pipeBuffer(w)
	if err != nil {
		w.Close()
		return fmt.Errorf("read the secrets pipe's size: %w", err)
	}
	if size > 0 && len(data) > size {
		w.Close()
		return fmt.Errorf("secrets (%d bytes) do not fit the pipe's %d-byte buffer", len(data), size)
	}
	// Where the size cannot be asked (macOS), a write that does not fit fails at the deadline
	// instead of blocking.
	if err := w.SetWriteDeadline(time.Now().Add(2 * time.Second)); err != nil {
		w.Close()
		return fmt.Errorf("bound the secrets pipe's write: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("write the secrets pipe (%d bytes; they must fit its buffer): %w", len(data), err)
	}
	// Closing the only write end lets the new process read to EOF.
	if err := w.Close(); err != nil {
		return fmt.Errorf("close the secrets pipe: %w", err)
	}
	// os.Pipe sets close-on-exec; the read end must survive exec.
	fd := r.Fd()
	if _, err := unix.FcntlInt(fd, unix.F_SETFD, 0); err != nil {
		return fmt.Errorf("keep the secrets pipe open across exec: %w", err)
	}
	env := append(slices.Clip(keep), secretsFDVar+"="+strconv.FormatUint(uint64(fd), 10))
	exe, err := selfExe()
	if err != nil {
		return fmt.Errorf("find the studio binary to re-exec: %w", err)
	}
	err = unix.Exec(exe, os.Args, env)
	return fmt.Errorf("re-exec studio without the secrets in its environment: %w", err)
}

// receiveSecrets runs in the re-executed process: it reads the secrets from the inherited pipe,
// closes it and serves them before the real environment.
func receiveSecrets(fdText string, environ []string) (func(string) string, error) {
	// The variable alone must not switch the protection off: if secrets are still in the
	// environment, it was set by someone else.
	if _, left := splitEnv(environ); len(left) > 0 {
		return nil, fmt.Errorf("%s is set but the environment still holds secret-bearing variables (%s); do not set %s yourself", secretsFDVar, namesOf(left), secretsFDVar)
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not an inherited file descriptor", secretsFDVar, fdText)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("secrets pipe %s=%d: %w", secretsFDVar, fd, err)
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFIFO {
		return nil, fmt.Errorf("%s=%d is not a pipe", secretsFDVar, fd)
	}
	f := os.NewFile(uintptr(fd), "studio-secrets")
	data, err := io.ReadAll(io.LimitReader(f, maxSecretsBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read the secrets pipe: %w", err)
	}
	if len(data) > maxSecretsBytes {
		return nil, fmt.Errorf("the secrets pipe holds more than %d bytes", maxSecretsBytes)
	}
	var secrets map[string]string
	if err := json.Unmarshal(data, &secrets); err != nil {
		return nil, fmt.Errorf("decode the secrets pipe: %w", err)
	}
	// Children started with os.Environ (git) must not inherit a stale descriptor number.
	if err := os.Unsetenv(secretsFDVar); err != nil {
		return nil, fmt.Errorf("unset %s: %w", secretsFDVar, err)
	}
	return withSecrets(secrets, os.Getenv), nil
}

// namesOf lists the names of secrets, sorted, never their values.
func namesOf(secrets map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(secrets)), ", ")
}
