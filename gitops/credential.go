package gitops

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// The token reaches git's credential helper on file descriptor 3 of the studio's own git
// processes, never through a path, an environment or an argument list. How the descriptor holds
// it depends on the system:
//
//   - Linux (credential_linux.go): an anonymous memory file (memfd_create). The helper reopens it
//     through /proc/self/fd/3, so every ask reads it from the start.
//   - elsewhere, macOS (credential_other.go): there is neither memfd nor /proc, and opening
//     /dev/fd/3 there duplicates the descriptor (its offset is shared), so a file could be read
//     only once per command. The descriptor is the read end of an anonymous pipe instead, holding
//     credentialCopies lines with the token: each ask consumes exactly one line (the shell's read
//     takes a pipe one byte at a time), and asks beyond the copies find EOF and fail closed.
//
// Both are in this file's reach on Linux (pipeHandoff is portable), so the tests run the macOS
// path on Linux too.

// handoff is one command's credential: file becomes the child's fd 3, helper is the
// credential.helper that reads it, close runs after the command ended.
type handoff struct {
	file   *os.File
	helper string
	close  func()
}

// handOff is the system's way (memfdHandoff on Linux, pipeHandoff elsewhere); tests swap it.
var handOff = platformHandoff

// credentialCopies is how many times one git command may ask for the token through a pipe. Each
// git process that authenticates over HTTP asks once and keeps the answer: a push asks in its one
// git-remote-https, a fetch in one or two (following tags can reconnect). The margin is wide; a
// command that asks more gets no credential and fails, it never blocks.
const credentialCopies = 16

// maxPipeToken bounds the token pipeHandoff accepts (GitHub tokens are well under 1 KiB).
const maxPipeToken = 4 << 10

// pipeHelper reads one line from fd 3 and answers git's `get` with it. read and printf are
// shell builtins (sh is bash or dash on every runner), so the token is in no process's argv.
const pipeHelper = `!f() { test "$1" = get && IFS= read -r p <&3 && printf 'username=x-access-token\npassword=%s\n' "$p"; }; f`

// pipeHandoff hands token over through an anonymous pipe: credentialCopies lines, written by a
// goroutine (a pipe buffer's size is the system's, so nothing may depend on it) while git runs.
// Nothing of it touches a disk or has a name; close discards what git did not read.
func pipeHandoff(token string) (*handoff, error) {
	if token == "" || len(token) > maxPipeToken || strings.ContainsAny(token, "\r\n\x00") {
		return nil, errors.New("the git token is empty, too long or spans lines")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the credential pipe: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		line := []byte(token + "\n")
		for range credentialCopies {
			if _, err := w.Write(line); err != nil {
				break // the command ended and close shut the pipe
			}
		}
		w.Close()
	}()
	var once sync.Once
	return &handoff{file: r, helper: pipeHelper, close: func() {
		once.Do(func() {
			r.Close()
			w.Close() // wakes a write still blocked on a full pipe
			<-done
		})
	}}, nil
}
