package fakecodex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// ScriptFile is the file, inside CODEX_HOME (the one variable the studio always passes to Codex),
// that tells the executable stand-in where its control server is. It holds only the server's
// address (a ControlFile), never the script itself: the script lives in the test's process.
const ScriptFile = "fake-codex-script.json"

// ControlFile is the content of ScriptFile.
type ControlFile struct {
	Control string `json:"control"`
}

// controlPath is where the executable posts its invocation and receives its Call.
const controlPath = "/invocation"

// maxInvocation bounds what the server reads of one invocation: a prompt and an environment, far
// below this, so a runaway request cannot exhaust the test's memory.
const maxInvocation = 64 << 20

// Control is the test's end of the executable stand-in: a loopback HTTP server that hands each
// invocation its scripted Call and records it. It keeps the per-kind counters and the log that
// the executable cannot keep itself, since every call gets a fresh CODEX_HOME thrown away when
// it ends. Safe for concurrent use.
type Control struct {
	srv *http.Server
	ln  net.Listener

	mu     sync.Mutex
	script Script
	next   counters
	log    []Invocation
}

// StartControl listens on 127.0.0.1:0 and serves script until Close.
func StartControl(script Script) (*Control, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the fake codex control server: %w", err)
	}
	c := &Control{ln: ln, script: script}
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// URL is the server's base address, for WriteControlFile.
func (c *Control) URL() string { return "http://" + c.ln.Addr().String() }

// Addr is the server's address (127.0.0.1:port): a sandboxed executable reaches it only when it
// is on the run's allow-list (the `allow-hosts` input), as a mirror on the runner would be.
func (c *Control) Addr() string { return c.ln.Addr().String() }

// Close stops the server; an executable that calls it afterwards fails.
func (c *Control) Close() { _ = c.srv.Close() }

// SetScript replaces the script. The counters carry on, as they did when a test rewrote the
// script file between runs: the next call of each kind takes the entry after the last one played.
func (c *Control) SetScript(s Script) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = s
}

// Script is the current script, for a test that amends it.
func (c *Control) Script() Script {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.script
}

// Invocations are the calls received so far, in the order the server received them.
func (c *Control) Invocations() []Invocation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log)
}

// ServeHTTP answers POST /invocation: it records the Invocation in the body and returns, as
// JSON, the Call of the script for it.
func (c *Control) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != controlPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST an invocation", http.StatusMethodNotAllowed)
		return
	}
	var inv Invocation
	if err := json.NewDecoder(io.LimitReader(r.Body, maxInvocation)).Decode(&inv); err != nil {
		http.Error(w, "bad invocation: "+err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.log = append(c.log, inv)
	call := c.script.Pick(inv.Review, c.next.take(inv.Review))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(call)
}

// WriteControlFile writes ScriptFile into dir (a CODEX_HOME), naming the control server at url,
// and creates dir if needed.
func WriteControlFile(dir, url string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	data, err := json.Marshal(ControlFile{Control: url})
	if err != nil {
		return fmt.Errorf("encode the control file: %w", err)
	}
	// World-readable: the agent user, not the test's, reads it.
	if err := os.WriteFile(filepath.Join(dir, ScriptFile), data, 0o644); err != nil {
		return fmt.Errorf("write the control file: %w", err)
	}
	return nil
}

// ErrNoControlFile means CODEX_HOME names no control server: the stand-in plays the empty script.
var ErrNoControlFile = errors.New("no fake codex control file")

// ReadControlFile returns the control server's address named in home. A missing file (or no
// home) is ErrNoControlFile; a file that names no server (an old inline script, say) is an error, so a test
// still written the old way fails instead of silently getting default calls.
func ReadControlFile(home string) (string, error) {
	if home == "" {
		return "", ErrNoControlFile
	}
	p := filepath.Join(home, ScriptFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoControlFile
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	var cf ControlFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if cf.Control == "" {
		return "", fmt.Errorf("%s names no control server (write it with fakecodex.WriteControlFile)", p)
	}
	return cf.Control, nil
}

// askTimeout bounds one round trip to the control server: it is on loopback and answers at once,
// so a longer wait means the test is gone.
const askTimeout = 30 * time.Second

// Ask posts inv to the control server at url and returns the Call it answers.
func Ask(url string, inv Invocation) (Call, error) {
	body, err := json.Marshal(inv)
	if err != nil {
		return Call{}, fmt.Errorf("encode the invocation: %w", err)
	}
	// No proxy: the server is on loopback, and a proxy in the agent's environment must not
	// stand between the stand-in and its test.
	client := &http.Client{Timeout: askTimeout, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Post(url+controlPath, "application/json", bytes.NewReader(body))
	if err != nil {
		return Call{}, fmt.Errorf("post the invocation: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return Call{}, fmt.Errorf("the control server answered %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	var call Call
	if err := json.NewDecoder(resp.Body).Decode(&call); err != nil {
		return Call{}, fmt.Errorf("decode the call: %w", err)
	}
	return call, nil
}

// counters number the calls of each kind, so successive calls follow the script.
type counters struct{ writes, reviews int }

// take returns the index of the next call of the kind and counts it.
func (n *counters) take(review bool) int {
	p := &n.writes
	if review {
		p = &n.reviews
	}
	i := *p
	*p++
	return i
}
