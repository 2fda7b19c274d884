package steplog

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
)

// tokenBytes is the fence token's entropy: 16 bytes, 32 hex characters. The runner masks a stop
// token longer than 6 characters, so it does not show in the log either.
const tokenBytes = 16

// tokenTries bounds the draws for a token the text does not hold. A random token is in the text
// only by chance (or, in tests, by a rigged source); a source that keeps hitting is broken.
const tokenTries = 4

// Log is a step's log. Its Write fences what it is given; Commands takes the studio's own workflow
// commands. It is safe for concurrent use.
type Log struct {
	mu sync.Mutex
	w  io.Writer
	// midLine is true when the last bytes written did not end a line: the next block or command
	// starts with a newline, so the runner reads it as a line of its own.
	midLine bool
	random  io.Reader // crypto/rand.Reader; tests rig it
}

// New returns the log that writes to w, the step's stdout.
func New(w io.Writer) *Log { return &Log{w: w, random: rand.Reader} }

// Write writes p, as it is, inside one stop-commands block made for it, with one Write to the
// stream: no line of p is acted on as a workflow command, and nothing else lands inside the
// block. It writes nothing when it cannot draw a token.
func (l *Log) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	tok, err := l.token(p)
	if err != nil {
		return 0, err
	}
	var b bytes.Buffer
	b.Grow(len(p) + 2*len(tok) + 24)
	if l.midLine {
		b.WriteByte('\n')
	}
	b.WriteString("::stop-commands::" + tok + "\n")
	b.Write(p)
	// The resume must be a line of its own; after a final "\r" this adds one line break ("\r\n").
	if p[len(p)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("::" + tok + "::\n")
	if err := l.write(b.Bytes()); err != nil {
		return 0, fmt.Errorf("steplog: write a fenced block: %w", err)
	}
	return len(p), nil
}

// Printf writes one fenced line; a newline is added when the format lacks one. A line that
// cannot be written has nowhere else to go, so the error is dropped.
func (l *Log) Printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if len(s) == 0 || s[len(s)-1] != '\n' {
		s += "\n"
	}
	_, _ = l.Write([]byte(s))
}

// Commands is the writer of the studio's own workflow commands (go-githubactions writes to it):
// what it is given passes as it is, between blocks and starting a line. Text the studio did not
// write never goes here.
func (l *Log) Commands() io.Writer { return commands{l} }

type commands struct{ l *Log }

func (c commands) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	out := p
	if c.l.midLine {
		out = append([]byte{'\n'}, p...)
	}
	if err := c.l.write(out); err != nil {
		return 0, fmt.Errorf("steplog: write a workflow command: %w", err)
	}
	return len(p), nil
}

// write sends p to the stream; l.mu is held.
func (l *Log) write(p []byte) error {
	_, err := l.w.Write(p)
	// After a failed write the stream may hold part of p: start the next one on a new line.
	l.midLine = err != nil || p[len(p)-1] != '\n'
	return err
}

// token draws a fresh fence token that p does not hold in any case (the runner compares the
// resume command ignoring case), so no line of p can end the block.
func (l *Log) token(p []byte) (string, error) {
	var raw [tokenBytes]byte
	for range tokenTries {
		if _, err := io.ReadFull(l.random, raw[:]); err != nil {
			return "", fmt.Errorf("steplog: draw a fence token: %w", err)
		}
		tok := hex.EncodeToString(raw[:])
		if !containsFold(p, tok) {
			return tok, nil
		}
	}
	return "", errors.New("steplog: draw a fence token: every token drawn is in the text")
}

// containsFold reports whether p holds tok (lower-case hex) in any case. Only ASCII letters fold
// to hex digits, so folding p's ASCII is enough.
func containsFold(p []byte, tok string) bool {
	return bytes.Contains(bytes.ToLower(p), []byte(tok))
}
