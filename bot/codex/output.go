package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Codex's stdout is the event stream, one JSON event a line; what the agent makes it print (a
// command's output, its own messages, a write to Codex's stdout from a process of the call) lands
// there too. It is recorded as it comes, redacted line by line, within two bounds, so a flood
// costs the studio neither memory nor disk: one 128 MiB line once cost 935 MiB, 190 s of CPU and
// 512 MiB of evidence.
const (
	// maxEventLineBytes bounds one line kept: a model's answer is at most its output tokens (128k,
	// about 0.5 MiB of text, twice that JSON-escaped), so a longer line is a command's output or
	// a flood; its start is kept and the rest dropped as it streams, never buffered.
	maxEventLineBytes = 4 << 20
	// maxEventsTotalBytes bounds one call's events.jsonl: a long real call (hundreds of commands)
	// writes a few MiB. The lines past it are dropped whole and counted: the file stays a
	// prefix of the stream, which the run's events.jsonl copies once more.
	maxEventsTotalBytes = 64 << 20
)

// OutputCut says what of a Codex call's output the evidence does not hold.
type OutputCut struct {
	// LinesCut lines were longer than maxEventLineBytes: each is kept to its start, and BytesCut
	// bytes of them were dropped.
	LinesCut int   `json:"linesCut,omitempty"`
	BytesCut int64 `json:"bytesCut,omitempty"`
	// LinesDropped lines (BytesDropped bytes) came after maxEventsTotalBytes and were dropped.
	LinesDropped int   `json:"linesDropped,omitempty"`
	BytesDropped int64 `json:"bytesDropped,omitempty"`
	// StderrBytesCut bytes of stderr came before the tail that is kept (DefaultMaxOutputBytes).
	StderrBytesCut int64 `json:"stderrBytesCut,omitempty"`
}

func (c OutputCut) add(d OutputCut) OutputCut {
	return OutputCut{
		LinesCut: c.LinesCut + d.LinesCut, BytesCut: c.BytesCut + d.BytesCut,
		LinesDropped: c.LinesDropped + d.LinesDropped, BytesDropped: c.BytesDropped + d.BytesDropped,
		StderrBytesCut: c.StderrBytesCut + d.StderrBytesCut,
	}
}

// Any reports whether anything was cut.
func (c OutputCut) Any() bool { return c != OutputCut{} }

// String words the cut for the step's lines and the evidence.
func (c OutputCut) String() string {
	var parts []string
	if c.LinesCut > 0 {
		parts = append(parts, fmt.Sprintf("%d event line(s) over %d bytes kept to their start (%d bytes dropped)", c.LinesCut, maxEventLineBytes, c.BytesCut))
	}
	if c.LinesDropped > 0 {
		parts = append(parts, fmt.Sprintf("%d event line(s) past %d bytes of events dropped (%d bytes)", c.LinesDropped, maxEventsTotalBytes, c.BytesDropped))
	}
	if c.StderrBytesCut > 0 {
		parts = append(parts, fmt.Sprintf("stderr kept to its last %d bytes (%d bytes before them dropped)", DefaultMaxOutputBytes, c.StderrBytesCut))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Codex's output was cut: " + strings.Join(parts, "; ")
}

// cutMarker is the type of the line the studio appends to a call's events.jsonl when it cut
// the stream. The agent can print a line of this type too; the studio never reads it back (the
// counts travel in the Result).
const cutMarker = "studio.output_cut"

// eventsWriter records Codex's stdout to w within maxLine and maxTotal, redacting each line whole
// (a secret never holds a newline, so no secret is split between writes). Close writes the last
// unterminated line and, when something was cut, a cutMarker line saying what.
type eventsWriter struct {
	mu       sync.Mutex
	r        *Redactor
	out      *bufio.Writer
	maxLine  int
	maxTotal int64

	line    []byte // the current line's kept start
	lineCut int64  // bytes of the current line beyond maxLine
	written int64
	full    bool // a line did not fit: every later line is dropped too
	cut     OutputCut
	err     error
}

func newEventsWriter(r *Redactor, w io.Writer) *eventsWriter {
	return &eventsWriter{r: r, out: bufio.NewWriterSize(w, 64<<10), maxLine: maxEventLineBytes, maxTotal: maxEventsTotalBytes}
}

func (e *eventsWriter) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		seg, rest, newline := bytes.Cut(p, []byte{'\n'})
		if room := e.maxLine - len(e.line); room > 0 {
			keep := min(room, len(seg))
			e.line = append(e.line, seg[:keep]...)
			e.lineCut += int64(len(seg) - keep)
		} else {
			e.lineCut += int64(len(seg))
		}
		if !newline {
			break
		}
		e.endLine()
		p = rest
	}
	if e.err != nil {
		return 0, e.err
	}
	return n, nil
}

// endLine writes the current line, or counts it dropped once the total is reached.
func (e *eventsWriter) endLine() {
	defer e.resetLine()
	if e.lineCut > 0 {
		e.cut.LinesCut++
		e.cut.BytesCut += e.lineCut
	}
	if !e.full {
		kept := e.r.RedactBytes(e.line)
		if e.lineCut > 0 {
			// The cut may have split a secret: what is left of it must not stay readable.
			kept = e.r.TrimPartialSecret(kept)
		}
		if size := int64(len(kept)) + 1; e.written+size <= e.maxTotal {
			if e.err == nil {
				_, e.err = e.out.Write(kept)
			}
			if e.err == nil {
				e.err = e.out.WriteByte('\n')
			}
			e.written += size
			return
		}
		e.full = true
	}
	e.cut.LinesDropped++
	e.cut.BytesDropped += int64(len(e.line)) + 1 // the cut part of a long line is in BytesCut
}

// resetLine starts the next line. A long line's buffer is not kept for it: memory stays at one
// line's bound, once.
func (e *eventsWriter) resetLine() {
	if cap(e.line) > 64<<10 {
		e.line = nil
	} else {
		e.line = e.line[:0]
	}
	e.lineCut = 0
}

// Close ends the stream: the last line (no newline after it) and the cut marker.
func (e *eventsWriter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.line) > 0 || e.lineCut > 0 {
		e.endLine()
	}
	if c := e.cut; c.Any() && e.err == nil {
		marker, _ := json.Marshal(struct {
			Type string `json:"type"`
			OutputCut
			MaxLineBytes  int `json:"maxLineBytes"`
			MaxTotalBytes int `json:"maxTotalBytes"`
		}{cutMarker, c, e.maxLine, int(e.maxTotal)})
		_, e.err = e.out.Write(append(marker, '\n'))
	}
	if e.err == nil {
		e.err = e.out.Flush()
	}
	return e.err
}

// Cut is what the writer dropped so far.
func (e *eventsWriter) Cut() OutputCut {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cut
}
