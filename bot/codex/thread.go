package codex

// An agent's conversation kept between calls (EngineAppServer): the thread's id and its rollout,
// the one file `codex app-server` writes per thread under $CODEX_HOME/sessions/YYYY/MM/DD/ and
// reads back on thread/resume (../shared/reference/app-server: a thread resumed from that file
// alone, on another machine, carried its whole history). A fix pass resumes the implementer's
// thread, so the agent keeps what it learned; a review never gets one.
//
// The rollout is written by Codex in the call's CODEX_HOME, inside the sandbox: the agent can
// rewrite it, and it is read back only as content. It is found without following a link (the
// agent could point sessions/ at a file of the studio's), read only after every process of the
// call is gone, bounded, and redacted; and a resumed thread gets the studio's sandbox, approval
// policy and model, never what the rollout says.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Thread is a kept conversation.
type Thread struct {
	ID string
	// Path is the rollout's place under CODEX_HOME ("sessions/2026/12/05/rollout-…-<id>.jsonl").
	Path    string
	Rollout []byte
}

// MaxRolloutBytes bounds a kept rollout; a longer one is not kept (the next pass starts fresh).
const MaxRolloutBytes = 16 << 20

// rolloutPath is where Codex keeps a rollout, relative to CODEX_HOME; threadID, a thread's id.
var (
	rolloutPath = regexp.MustCompile(`^sessions/[0-9]{4}/[0-9]{2}/[0-9]{2}/rollout-[0-9A-Za-z:.-]+\.jsonl$`)
	threadID    = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)
)

// isRolloutOf reports whether path is a rollout path of thread id.
func isRolloutOf(path, id string) bool {
	return threadID.MatchString(id) && rolloutPath.MatchString(path) && strings.HasSuffix(path, "-"+id+".jsonl")
}

// placeRollout puts the thread's rollout where thread/resume looks for it, in a fresh CODEX_HOME.
func placeRollout(home string, t *Thread) error {
	if !isRolloutOf(t.Path, t.ID) {
		return fmt.Errorf("the kept thread %q has no rollout path of its own (%q)", t.ID, t.Path)
	}
	dir, err := mkdirNoFollow(home, filepath.Dir(t.Path))
	if err != nil {
		return fmt.Errorf("place the thread's rollout: %w", err)
	}
	return writeFileNoFollow(filepath.Join(dir, filepath.Base(t.Path)), t.Rollout, 0o600)
}

// readRollout finds and reads thread id's rollout in home, following no link: each level below
// sessions/ must be a real directory, the file a regular one.
func readRollout(home, id string, red *Redactor) (*Thread, error) {
	var found []string
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		entries, err := os.ReadDir(filepath.Join(home, rel))
		if err != nil {
			return err
		}
		for _, e := range entries {
			child := rel + "/" + e.Name()
			fi, err := os.Lstat(filepath.Join(home, child))
			if err != nil {
				return err
			}
			switch {
			case depth < 3 && fi.IsDir():
				if err := walk(child, depth+1); err != nil {
					return err
				}
			case depth == 3 && fi.Mode().IsRegular() && strings.HasSuffix(e.Name(), "-"+id+".jsonl"):
				found = append(found, child)
			}
		}
		return nil
	}
	fi, err := os.Lstat(filepath.Join(home, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("no rollout of thread %s: %w", id, err)
	}
	if !fi.IsDir() {
		return nil, errors.New("the call's sessions folder is not a directory")
	}
	if err := walk("sessions", 0); err != nil {
		return nil, fmt.Errorf("find the rollout of thread %s: %w", id, err)
	}
	if len(found) != 1 || !isRolloutOf(found[0], id) {
		return nil, fmt.Errorf("thread %s has %d rollout files, want 1", id, len(found))
	}
	data, truncated, err := readFileNoFollow(filepath.Join(home, found[0]), MaxRolloutBytes)
	if err != nil {
		return nil, fmt.Errorf("read the rollout of thread %s: %w", id, err)
	}
	if truncated {
		return nil, fmt.Errorf("the rollout of thread %s is over %d bytes: not kept", id, MaxRolloutBytes)
	}
	return &Thread{ID: id, Path: found[0], Rollout: red.RedactBytes(data)}, nil
}
