package codex

// A call watched while it runs (EngineAppServer): the caller gets every notification as it
// arrives and the running turn's handle, and ProgressTracker folds the notifications into what a
// status comment shows (the agent's plan, the command in flight, the files changed, the tokens).
// The exec engine reports nothing live: its events are judged after the process exits.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Live is a caller's window on one call while it runs.
type Live struct {
	// Notify gets every notification of the call, redacted, in the server's order. It runs on
	// the reading goroutine and must not block.
	Notify func(Notification)
	// Turn gets the call's turn once it started, and nil once it ended: a steer is delivered to
	// the turn it holds, and after nil to the next call's.
	Turn func(Turn)
}

// LiveReporter is a Runner that can say whether it reports its calls while they run.
type LiveReporter interface {
	ReportsLive() bool
}

// ReportsLive: the app-server engine reports every call live; the exec engine judges the event
// stream after the process exits.
func (c CLI) ReportsLive() bool { return c.Engine == EngineAppServer }

// Turn is an agent's turn in progress.
type Turn interface {
	// Steer adds text to the turn: the agent reads it in its next model request.
	Steer(ctx context.Context, text string) error
	// Interrupt stops the turn.
	Interrupt(ctx context.Context) error
}

func (l *Live) notify(n Notification) {
	if l != nil && l.Notify != nil {
		l.Notify(n)
	}
}

func (l *Live) turn(t Turn) {
	if l != nil && l.Turn != nil {
		l.Turn(t)
	}
}

// PlanStep is one step of the agent's plan (turn/plan/updated).
type PlanStep struct {
	Step   string
	Status string // pending | inProgress | completed
}

// Progress is what a call has done so far. Plan steps, the command and the paths are the agent's
// text: whoever shows them must defuse them.
type Progress struct {
	Plan []PlanStep
	// Running is the command in flight; "" between commands.
	Running string
	// Commands counts the commands that completed.
	Commands int
	// Files are the paths changed so far, relative to the workdir, in the order first changed.
	Files []string
	Usage Usage
}

// Equal reports whether two snapshots show the same.
func (p Progress) Equal(o Progress) bool {
	return slices.Equal(p.Plan, o.Plan) && p.Running == o.Running && p.Commands == o.Commands &&
		slices.Equal(p.Files, o.Files) && p.Usage == o.Usage
}

// maxProgressFiles bounds the paths a snapshot keeps: a status comment shows a few.
const maxProgressFiles = 200

// ProgressTracker folds a call's notifications into its Progress. Safe for concurrent use.
type ProgressTracker struct {
	workdir string

	mu sync.Mutex
	p  Progress
}

// NewProgressTracker tracks a call run in workdir (paths are shown relative to it).
func NewProgressTracker(workdir string) *ProgressTracker {
	return &ProgressTracker{workdir: workdir}
}

// Snapshot is the progress so far; the caller owns the copy.
func (t *ProgressTracker) Snapshot() Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.p
	p.Plan, p.Files = slices.Clone(p.Plan), slices.Clone(p.Files)
	return p
}

// Add folds one notification in; it reports whether the progress changed.
func (t *ProgressTracker) Add(n Notification) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	before := t.p
	before.Plan, before.Files = slices.Clone(t.p.Plan), slices.Clone(t.p.Files)
	switch n.Method {
	case "turn/plan/updated":
		var p struct {
			Plan []struct {
				Step   string `json:"step"`
				Status string `json:"status"`
			} `json:"plan"`
		}
		if json.Unmarshal(n.Params, &p) != nil {
			return false
		}
		t.p.Plan = t.p.Plan[:0:0]
		for _, s := range p.Plan {
			t.p.Plan = append(t.p.Plan, PlanStep{Step: s.Step, Status: s.Status})
		}
	case "item/started", "item/completed":
		var p struct {
			Item threadItem `json:"item"`
		}
		if json.Unmarshal(n.Params, &p) != nil {
			return false
		}
		switch p.Item.Type {
		case "commandExecution":
			if n.Method == "item/started" {
				t.p.Running = p.Item.Command
			} else {
				t.p.Running = ""
				t.p.Commands++
			}
		case "fileChange":
			if n.Method == "item/completed" && p.Item.Status == "completed" {
				for _, c := range p.Item.Changes {
					t.addFile(c.Path)
				}
			}
		}
	case "thread/tokenUsage/updated":
		u, ok := threadUsage(n.Params)
		if !ok {
			return false
		}
		t.p.Usage = u
	default:
		return false
	}
	return !before.Equal(t.p)
}

func (t *ProgressTracker) addFile(path string) {
	if t.workdir != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(t.workdir, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = filepath.ToSlash(rel)
		}
	}
	if path == "" || slices.Contains(t.p.Files, path) || len(t.p.Files) == maxProgressFiles {
		return
	}
	t.p.Files = append(t.p.Files, path)
}
