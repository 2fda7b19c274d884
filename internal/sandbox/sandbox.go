// Package sandbox builds a complete offline world for one studio run: the GitHub emulator with a
// repository, a writer and the bot account, a runner workspace cloned from the emulator's git
// remote (as actions/checkout leaves it), and the Actions environment pointing at all of it. The
// demo and the end-to-end tests share it so both exercise the same path a real runner takes.
package sandbox

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

// Fixed names of the world.
const (
	Owner     = "acme"
	Repo      = "hop"
	Writer    = "octocat"
	BotLogin  = "github-actions[bot]"
	BotToken  = "ghs_sandboxBotToken0123456789abcdef"
	OpenAIKey = "sk-sandbox-openai-key-0123456789"
	RunID     = "4242"
)

// DefaultFiles is the repository's initial content: a fast-prototype studio project.
func DefaultFiles(studioMode string) map[string]string {
	return map[string]string{
		".codex/studio.json": fmt.Sprintf(`{
  "schemaVersion": 1,
  "product": "codex-game-studio",
  "name": "Hop",
  "slug": "hop",
  "engine": "godot",
  "mode": "prototype",
  "studioMode": %q,
  "status": "active"
}
`, studioMode),
		"README.md":          "# Hop\n\nA tiny platformer.\n",
		"src/player/jump.gd": "extends Node\n\nconst JUMP_VELOCITY = -300.0\n",
		"src/player/old.gd":  "extends Node\n# superseded by jump.gd\n",
		"design/gdd.md":      "# Hop design\n\nJumps should feel snappy.\n",
	}
}

// Options shape the world.
type Options struct {
	Files map[string]string // initial repository content; DefaultFiles("fast-prototype") when nil
	Now   func() time.Time
	// Token is the bot's token; BotToken when empty. Attack tests use a token of their own, so
	// that a process elsewhere on the machine showing the well-known one cannot be mistaken
	// for a leak.
	Token string
	// Dir holds the workspace and runner temp; a new temporary directory when empty.
	Dir string
}

// World is one running sandbox.
type World struct {
	Emu        *ghemu.Server
	Dir        string
	Workspace  string
	RunnerTemp string
	// AgentUID is the agent-user Env passes (INPUT_AGENT-USER): a uid of this world's own, so
	// the jail's sweep of one world (or test process) never kills another's agents.
	AgentUID int
	// Token is the bot's token in this world.
	Token string
	// Mirrors are addresses on the runner's loopback the world's agent must reach (the fake
	// Codex's control server): Env adds them to the allow-hosts input, as a team lists a mirror
	// on the runner, since a sandboxed call reaches nothing else but through the egress proxy.
	Mirrors []string
	ownsDir bool
	shared  bool // a second runner's world: the emulator is the first's (SecondRunner)
}

var worlds atomic.Int64

// agentUID derives a uid no other world of any process uses at the same time: 300000 plus the
// pid times 1000 plus a per-process sequence. It stays below 2^31 for every pid up to 2,000,000
// (pids above wrap, as do more than 1000 worlds per process, which only matters if they run
// at once).
func agentUID() int {
	return 300_000 + (os.Getpid()%2_000_000)*1000 + int(worlds.Add(1)%1000)
}

// New starts the emulator, seeds the repository and clones the workspace.
func New(opts Options) (*World, error) {
	w := &World{Dir: opts.Dir, AgentUID: agentUID(), Token: opts.Token}
	if w.Token == "" {
		w.Token = BotToken
	}
	if w.Dir == "" {
		d, err := os.MkdirTemp("", "studio-sandbox-")
		if err != nil {
			return nil, err
		}
		w.Dir, w.ownsDir = d, true
	}
	emu, err := ghemu.New(ghemu.Options{Now: opts.Now, Dir: filepath.Join(w.Dir, "remote")})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start GitHub emulator: %w", err)
	}
	w.Emu = emu
	files := opts.Files
	if files == nil {
		files = DefaultFiles("fast-prototype")
	}
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: Owner, Name: Repo, Files: files, Message: "Start Hop"}); err != nil {
		w.Close()
		return nil, err
	}
	emu.AddUser(Writer)
	emu.AddBot(BotLogin)
	for login, role := range map[string]ghemu.Role{Writer: ghemu.RoleWrite, BotLogin: ghemu.RoleWrite} {
		if err := emu.SetRole(Owner, Repo, login, role); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := emu.AddToken(w.Token, BotLogin); err != nil {
		w.Close()
		return nil, err
	}
	w.Workspace = filepath.Join(w.Dir, "workspace")
	w.RunnerTemp = filepath.Join(w.Dir, "runner-temp")
	if err := os.MkdirAll(w.RunnerTemp, 0o755); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.checkout(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// checkout clones the default branch the way actions/checkout does with its defaults, including
// the persisted Authorization extraheader the action must strip before the agent runs.
func (w *World) checkout() error {
	url := w.Emu.GitURL(Owner, Repo)
	if out, err := exec.Command("git", "clone", "--quiet", url, w.Workspace).CombinedOutput(); err != nil {
		return fmt.Errorf("clone workspace: %v: %s", err, out)
	}
	header := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+w.Token))
	key := fmt.Sprintf("http.%s/.extraheader", w.Emu.URL())
	if out, err := exec.Command("git", "-C", w.Workspace, "config", "--local", key, header).CombinedOutput(); err != nil {
		return fmt.Errorf("persist checkout credentials: %v: %s", err, out)
	}
	return nil
}

// Env writes the event payload and returns the Actions environment for one step of the action.
// extra adds or overrides variables (e.g. INPUT_ALLOWED-BOTS).
func (w *World) Env(eventName string, payload []byte, extra map[string]string) (map[string]string, error) {
	eventPath := filepath.Join(w.RunnerTemp, "event.json")
	if err := os.WriteFile(eventPath, payload, 0o644); err != nil {
		return nil, err
	}
	output := filepath.Join(w.RunnerTemp, "output.txt")
	summary := filepath.Join(w.RunnerTemp, "summary.md")
	for _, f := range []string{output, summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return nil, err
		}
	}
	env := map[string]string{
		"GITHUB_ACTIONS":       "true",
		"GITHUB_EVENT_NAME":    eventName,
		"GITHUB_EVENT_PATH":    eventPath,
		"GITHUB_REPOSITORY":    Owner + "/" + Repo,
		"GITHUB_API_URL":       strings.TrimSuffix(w.Emu.APIURL(), "/"),
		"GITHUB_SERVER_URL":    w.Emu.URL(),
		"GITHUB_WORKSPACE":     w.Workspace,
		"GITHUB_RUN_ID":        RunID,
		"GITHUB_OUTPUT":        output,
		"GITHUB_STEP_SUMMARY":  summary,
		"RUNNER_TEMP":          w.RunnerTemp,
		"PATH":                 os.Getenv("PATH"),
		"HOME":                 os.Getenv("HOME"),
		"INPUT_GITHUB-TOKEN":   w.Token,
		"INPUT_OPENAI-API-KEY": OpenAIKey,
		"INPUT_AGENT-USER":     strconv.Itoa(w.AgentUID),
	}
	for k, v := range extra {
		env[k] = v
	}
	if len(w.Mirrors) > 0 {
		env["INPUT_ALLOW-HOSTS"] = strings.TrimSpace(env["INPUT_ALLOW-HOSTS"] + " " + strings.Join(w.Mirrors, " "))
	}
	return env, nil
}

// Outputs reads the step outputs the action wrote (GITHUB_OUTPUT's heredoc format).
func (w *World) Outputs() (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(w.RunnerTemp, "output.txt"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out, nil
}

// Summary reads the job summary the action wrote.
func (w *World) Summary() (string, error) {
	data, err := os.ReadFile(filepath.Join(w.RunnerTemp, "summary.md"))
	return string(data), err
}

// SecondRunner is another job on the same repository, as a second workflow run gets: its own
// workspace (a fresh checkout), runner temp and agent uid under dir, the same emulator. Closing
// it leaves the emulator to w.
func (w *World) SecondRunner(dir string) (*World, error) {
	o := &World{Emu: w.Emu, Dir: dir, AgentUID: agentUID(), Token: w.Token, shared: true}
	o.Workspace = filepath.Join(dir, "workspace")
	o.RunnerTemp = filepath.Join(dir, "runner-temp")
	if err := os.MkdirAll(o.RunnerTemp, 0o755); err != nil {
		return nil, err
	}
	// The repository stays where tools look for it: dir/remote is the first world's.
	if err := os.Symlink(filepath.Join(w.Dir, "remote"), filepath.Join(dir, "remote")); err != nil {
		return nil, err
	}
	if err := o.checkout(); err != nil {
		return nil, err
	}
	return o, nil
}

// Close stops the emulator and removes what the world created.
func (w *World) Close() {
	if w.Emu != nil && !w.shared {
		w.Emu.Close()
	}
	if w.ownsDir {
		os.RemoveAll(w.Dir)
	}
}
