// Package threads keeps an agent's conversation past the job that had it: the thread's rollout
// (the one file `codex app-server` resumes a thread from) is stored through the Git data API as
// refs/studio/threads/issue-<N>, so `/studio continue` on any runner goes on in the same thread.
// Like the locks and the ledger, nothing but GitHub keeps it.
//
// What is kept is content, never capability: the rollout was written inside the agent's sandbox
// and the agent can rewrite it, so a kept thread is the same role's context and nothing more. It
// is bounded (a rollout over the bound, or one that does not read back, is not resumed: the next
// run starts a new thread and says so), it was redacted before it got here (bot/codex reads it
// through the call's redactor), and the run that resumes it applies today's scope, approvals and
// budgets as it would to a fresh one.
package threads

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
)

// Git is what keeping a thread asks of GitHub's Git database API; *hub.Client implements it.
type Git interface {
	CreateBlob(ctx context.Context, content []byte) (string, error)
	BlobBytes(ctx context.Context, sha string) ([]byte, error)
	CreateFileTree(ctx context.Context, name, blob string) (string, error)
	CreateRecordCommit(ctx context.Context, message, tree string) (string, error)
	// CreateRef creates ref at sha (hub.ErrRefExists when it is there); SetRef moves it there
	// whatever it pointed at, creating it when absent.
	CreateRef(ctx context.Context, ref, sha string) error
	SetRef(ctx context.Context, ref, sha string) error
	// LockRecord returns the commit ref points at and its message (hub.ErrNotFound when the ref
	// does not exist): the ref and the commit, two requests.
	LockRecord(ctx context.Context, ref string) (sha, message string, err error)
}

// Ref is the ref an issue's thread is kept under.
func Ref(issue int) string { return fmt.Sprintf("refs/studio/threads/issue-%d", issue) }

// Bounds: a rollout larger than MaxRolloutBytes is never kept (bot/codex refuses it first), and
// a stored one is read back only up to it; the chain keeps the last MaxChain runs.
const (
	MaxRolloutBytes = 16 << 20
	MaxChain        = 20
)

// fileName is the rollout's name in the kept tree.
const fileName = "rollout.jsonl.gz"

// header starts the record commit's message; the JSON record follows a blank line.
const header = "studio thread"

// Record is what the ref's commit message says of the kept thread.
type Record struct {
	Version int    `json:"v"`
	Issue   int    `json:"issue"`
	Thread  string `json:"thread"`
	// Path is the rollout's place under CODEX_HOME, where thread/resume looks for it.
	Path string `json:"path"`
	// Blob is the compressed rollout's blob, so restoring takes the ref, its commit and the blob.
	Blob  string `json:"blob"`
	Bytes int    `json:"bytes"`
	// Role and Branch are whose thread it is and the task branch its work is on: a run of another
	// role does not resume it.
	Role   string `json:"role"`
	Branch string `json:"branch"`
	// Head is the task branch's head when the thread was kept ("" when nothing was pushed).
	Head string `json:"head,omitempty"`
	// Chain is every run of the task's threads, oldest first, the last MaxChain.
	Chain []Link `json:"chain"`
}

// Link is one run of a thread.
type Link struct {
	Thread  string    `json:"thread"`
	Run     string    `json:"run"`
	At      time.Time `json:"at"`
	Turns   int       `json:"turns"`
	Tokens  int64     `json:"tokens"`
	CostUSD float64   `json:"costUsd"`
	// Ended is the run's verdict (done, blocked, stopped, paused, cancelled, error).
	Ended string `json:"ended"`
	// Resumed says the run went on in a thread an earlier run kept.
	Resumed bool `json:"resumed,omitempty"`
}

// Last is the chain's latest run, zero when there is none.
func (r Record) Last() Link {
	if len(r.Chain) == 0 {
		return Link{}
	}
	return r.Chain[len(r.Chain)-1]
}

// Kept is a thread as it was restored.
type Kept struct {
	Record  Record
	Rollout []byte
}

// Unusable says a kept thread cannot be resumed (its record or rollout does not read back, or is
// over the bound): the run starts a new thread and says why.
type Unusable struct{ Why string }

func (e *Unusable) Error() string { return "the kept thread cannot be resumed: " + e.Why }

// Store keeps threads in one repository.
type Store struct{ Git Git }

// Load restores the issue's kept thread in three requests (the ref, its commit, the blob); nil
// when none is kept. A thread that does not read back is an *Unusable error, with its record
// when that much was readable.
func (s Store) Load(ctx context.Context, issue int) (*Kept, error) {
	_, msg, err := s.Git.LockRecord(ctx, Ref(issue))
	if errors.Is(err, hub.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the kept thread: %w", err)
	}
	rec, err := ParseMessage(msg)
	if err != nil {
		return nil, &Unusable{Why: err.Error()}
	}
	if rec.Issue != issue {
		return nil, &Unusable{Why: fmt.Sprintf("its record is for #%d", rec.Issue)}
	}
	data, err := s.Git.BlobBytes(ctx, rec.Blob)
	if err != nil {
		return &Kept{Record: rec}, &Unusable{Why: "its rollout cannot be read: " + err.Error()}
	}
	rollout, err := gunzip(data, MaxRolloutBytes)
	if err != nil {
		return &Kept{Record: rec}, &Unusable{Why: err.Error()}
	}
	return &Kept{Record: rec, Rollout: rollout}, nil
}

// Save keeps rollout as the issue's thread with rec (whose Chain the caller extended): the
// compressed blob, its tree, the record's commit and the ref moved to it, four requests. exists
// says the ref is there (so it is moved rather than created); a wrong guess costs one more.
func (s Store) Save(ctx context.Context, issue int, rec Record, rollout []byte, exists bool) (Record, error) {
	if len(rollout) > MaxRolloutBytes {
		return rec, fmt.Errorf("the rollout is %d bytes, over the %d a kept thread may hold", len(rollout), MaxRolloutBytes)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(rollout); err != nil {
		return rec, err
	}
	if err := zw.Close(); err != nil {
		return rec, err
	}
	blob, err := s.Git.CreateBlob(ctx, buf.Bytes())
	if err != nil {
		return rec, err
	}
	tree, err := s.Git.CreateFileTree(ctx, fileName, blob)
	if err != nil {
		return rec, err
	}
	rec.Version, rec.Issue, rec.Blob, rec.Bytes = 1, issue, blob, len(rollout)
	if len(rec.Chain) > MaxChain {
		rec.Chain = rec.Chain[len(rec.Chain)-MaxChain:]
	}
	commit, err := s.Git.CreateRecordCommit(ctx, Message(rec), tree)
	if err != nil {
		return rec, err
	}
	if !exists {
		if err := s.Git.CreateRef(ctx, Ref(issue), commit); !errors.Is(err, hub.ErrRefExists) {
			return rec, err
		}
	}
	return rec, s.Git.SetRef(ctx, Ref(issue), commit)
}

// Message is the record commit's message: a header line, a blank line, the record's JSON.
func Message(rec Record) string {
	data, _ := json.Marshal(rec)
	return fmt.Sprintf("%s: issue #%d\n\n%s\n", header, rec.Issue, data)
}

// ParseMessage reads a record commit's message.
func ParseMessage(msg string) (Record, error) {
	first, rest, _ := strings.Cut(msg, "\n")
	if !strings.HasPrefix(first, header+":") {
		return Record{}, errors.New("its ref holds no thread record")
	}
	var rec Record
	if err := json.Unmarshal([]byte(strings.TrimSpace(rest)), &rec); err != nil {
		return Record{}, fmt.Errorf("its record does not parse: %w", err)
	}
	if rec.Version != 1 || rec.Thread == "" || rec.Blob == "" {
		return Record{}, errors.New("its record lacks the thread, the blob or the version")
	}
	return rec, nil
}

// gunzip reads a compressed rollout, refusing one that grows past limit.
func gunzip(data []byte, limit int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("its rollout is not gzip: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("its rollout does not decompress: %w", err)
	}
	if len(out) > limit {
		return nil, fmt.Errorf("its rollout is over %d bytes", limit)
	}
	return out, nil
}
