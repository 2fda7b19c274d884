package codex

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/policy"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// RunIDs hands out seed §9.2 run ids: YYYYMMDDHHmmssSSS (UTC) - pid - a process-local sequence.
// The clock is injected so tests get stable ids.
type RunIDs struct {
	Now func() time.Time
	PID int
	seq atomic.Int64
}

// Next returns a new run id.
func (g *RunIDs) Next() string {
	return RunID(g.Now(), g.PID, g.seq.Add(1))
}

// RunID formats one run id.
func RunID(now time.Time, pid int, seq int64) string {
	t := now.UTC()
	return fmt.Sprintf("%s%03d-%d-%d", t.Format("20060102150405"), t.Nanosecond()/int(time.Millisecond), pid, seq)
}

// Product names the action in metadata.json.
const Product = "codex-studio-action"

// Metadata is metadata.json: the seed §9.2 fields plus runId.
type Metadata struct {
	RunID                   string             `json:"runId"`
	Timestamp               string             `json:"timestamp"`
	Product                 string             `json:"product"`
	Project                 string             `json:"project"`
	Role                    string             `json:"role"`
	Task                    string             `json:"task"`
	CustomRole              bool               `json:"customRole,omitempty"`
	PromptChars             int                `json:"prompt_chars"`
	PromptCachePath         string             `json:"prompt_cache_path"`
	SelectedModelTier       string             `json:"selectedModelTier"`
	SelectedModel           string             `json:"selectedModel"`
	ModelReasoningEffort    string             `json:"modelReasoningEffort"`
	FallbackModel           string             `json:"fallbackModel"`
	FallbackReasoningEffort string             `json:"fallbackReasoningEffort"`
	ModelSelectionSource    string             `json:"modelSelectionSource"`
	Review                  bool               `json:"review"`
	Fix                     bool               `json:"fix"`
	MaxFixPasses            int                `json:"max_fix_passes"`
	WritePolicy             string             `json:"writePolicy"`
	AllowFileEdits          bool               `json:"allowFileEdits"`
	CodexSandbox            string             `json:"codexSandbox"`
	Eligibility             policy.Eligibility `json:"eligibility"`
}

// Evidence is one run folder, <runs>/<run-id>-<role>/. Every file goes through the redactor.
//
//	prompt.md           the implementation prompt
//	metadata.json       Metadata
//	events.jsonl        every Codex call's events, each call introduced by a studio.call line
//	output.txt          the lifecycle lines, joined by blank lines as the seed prints them
//	review-schema.json  the --output-schema file
//	result.json         the structured Outcome
//	steps/NN-<step>/    per step: prompt.md, events.jsonl, last-message.txt, stderr.txt
//	                    (Codex calls), result.json/stdout.txt/stderr.txt (verification),
//	                    verdict.json (review)
type Evidence struct {
	Dir      string
	Redactor *Redactor

	mu   sync.Mutex
	step int
}

// NewEvidence creates <runsDir>/<runID>-<role>/. runsDir belongs outside the agent's reach (the
// action uses RUNNER_TEMP/studio-runs); a symbolic link found at the run folder is replaced, and
// every file is written without following links (writeFileNoFollow), so even a planted link never
// sends evidence elsewhere.
func NewEvidence(runsDir, runID, role string, r *Redactor) (*Evidence, error) {
	dir, err := mkdirNoFollow(runsDir, runID+"-"+role)
	if err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	return &Evidence{Dir: dir, Redactor: r}, nil
}

// StepDir reserves the next numbered step folder (not yet created).
func (e *Evidence) StepDir(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.step++
	return filepath.Join(e.Dir, "steps", fmt.Sprintf("%02d-%s", e.step, name))
}

// Write stores data at rel (relative to the run folder), redacted.
func (e *Evidence) Write(rel string, data []byte) error {
	dir, err := mkdirNoFollow(e.Dir, filepath.Dir(rel))
	if err != nil {
		return fmt.Errorf("evidence %s: %w", rel, err)
	}
	if err := writeFileNoFollow(filepath.Join(dir, filepath.Base(rel)), e.Redactor.RedactBytes(data), 0o644); err != nil {
		return fmt.Errorf("evidence %s: %w", rel, err)
	}
	return nil
}

// WriteJSON stores v as indented JSON, redacted.
func (e *Evidence) WriteJSON(rel string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence %s: %w", rel, err)
	}
	return e.Write(rel, append(data, '\n'))
}

// maxEventsBytes bounds one call's events.jsonl copied into the run's: the call's own bound and
// the studio's line saying what was cut.
const maxEventsBytes = maxEventsTotalBytes + 64<<10

// AppendEvents adds one call's events to the run's events.jsonl, after a marker line naming the
// step, so one file tells the whole run in order. The call's file is streamed through the
// redactor line by line (it may hold 64 MiB; a line at most 4 MiB): a secret the run learnt after
// the call is masked too, and memory stays at one line.
func (e *Evidence) AppendEvents(step string, res Result) error {
	head := map[string]any{"type": "studio.call", "step": step, "model": res.Model}
	if res.OutputCut.Any() {
		head["outputCut"] = res.OutputCut
	}
	marker, _ := json.Marshal(head)
	f, err := openNoFollow(filepath.Join(e.Dir, "events.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("evidence events.jsonl: %w", err)
	}
	out := bufio.NewWriterSize(f, 64<<10)
	w := e.Redactor.LineWriter(out)
	_, werr := w.Write(append(marker, '\n'))
	if res.EventsPath != "" && werr == nil {
		if ev, oerr := openNoFollow(res.EventsPath, os.O_RDONLY|syscall.O_NONBLOCK, 0); oerr == nil {
			src := &lastByteReader{r: io.LimitReader(ev, maxEventsBytes)}
			n, cerr := io.Copy(w, src)
			ev.Close()
			werr = cerr
			if werr == nil && n > 0 && src.last != '\n' {
				_, werr = w.Write([]byte{'\n'}) // a last line without its newline ends here
			}
		}
	}
	werr = errors.Join(werr, w.Close(), out.Flush(), f.Close())
	if werr != nil {
		return fmt.Errorf("evidence events.jsonl: %w", werr)
	}
	return nil
}

// lastByteReader remembers the last byte read through it.
type lastByteReader struct {
	r    io.Reader
	last byte
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// WriteOutput rewrites output.txt with the lines so far, so an interrupted run still leaves them.
func (e *Evidence) WriteOutput(lines []string) error {
	return e.Write("output.txt", []byte(strings.Join(lines, "\n\n")+"\n"))
}
