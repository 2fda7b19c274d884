package codex

import (
	"bytes"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret in redacted text.
const Mask = "***"

// minSecretLen keeps very short values (an empty input, "1") from being "secrets": masking them
// would shred ordinary text while protecting nothing.
const minSecretLen = 4

// Redactor masks known secret values in text the bot writes: logs, prompts, evidence, comments.
// A nil *Redactor is valid and masks nothing.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string
}

// NewRedactor masks the given secrets (empty and very short values are ignored).
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add masks further secrets from now on: values that exist only after the redactor was built,
// such as a GitHub App installation token minted mid-run. Safe for concurrent use with Redact.
// Empty, very short and already known values are ignored.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if len(s) >= minSecretLen && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	// Longest first, so a secret that contains another is masked whole.
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// Redact returns s with every secret replaced by Mask.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Mask)
	}
	return s
}

// RedactBytes is Redact for byte slices.
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		// ReplaceAll copies b even when sec is not there; most text holds no secret.
		if bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(Mask))
		}
	}
	return b
}

// TrimPartialSecret drops from the end of b what could be the start of a secret: a line cut to
// a bound may end inside one, which masking cannot find whole.
func (r *Redactor) TrimPartialSecret(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for trimmed := true; trimmed; {
		trimmed = false
		for _, sec := range r.secrets {
			for k := min(len(sec)-1, len(b)); k > 0; k-- {
				if bytes.HasSuffix(b, []byte(sec[:k])) {
					b, trimmed = b[:len(b)-k], true
					break
				}
			}
		}
	}
	return b
}

// LineWriter returns a writer that redacts w's input line by line. Secrets never contain a newline,
// so buffering up to each '\n' is enough to catch a secret split across writes. Call Close to
// flush a final unterminated line.
func (r *Redactor) LineWriter(w io.Writer) io.WriteCloser {
	return &lineRedactor{r: r, w: w}
}

type lineRedactor struct {
	mu  sync.Mutex
	r   *Redactor
	w   io.Writer
	buf []byte
}

func (l *lineRedactor) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Only p can hold the newline that ends a line: looking through the whole buffer again on
	// every write made one long line cost time quadratic in its length.
	j := bytes.LastIndexByte(p, '\n')
	i := -1
	if j >= 0 {
		i = len(l.buf) + j
	}
	l.buf = append(l.buf, p...)
	if i < 0 {
		return len(p), nil
	}
	if _, err := l.w.Write(l.r.RedactBytes(l.buf[:i+1])); err != nil {
		return 0, err
	}
	l.buf = append(l.buf[:0], l.buf[i+1:]...)
	return len(p), nil
}

func (l *lineRedactor) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.r.RedactBytes(l.buf))
	l.buf = nil
	return err
}
