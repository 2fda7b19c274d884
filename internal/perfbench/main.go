// Command perfbench times the studio's whole run against the git CLI doing the same job, on a
// generated repository of many files (scripts/bench runs it; docs/performance.md records it).
//
// Each round builds a fresh offline world with internal/sandbox (the GitHub emulator serving the
// repository over loopback HTTP with the real git http-backend, a workspace cloned the way
// actions/checkout leaves it), then:
//
//	(a) runs the built `studio action` binary on a `/studio run` comment of a task issue whose task
//	    block has `runPolicy: {review: false}`, with the fake Codex scripted as a no-op agent that
//	    edits the one in-scope file;
//	(b) does the same job with the git CLI on an equivalent clone: status, add of that file,
//	    commit, push to the same emulator.
//
// It prints per-round times, medians, their ratio and the action's peak RSS (the largest of the
// studio process and every process it started and waited for, git included), and exits non-zero
// when a target is missed, unless -report-only.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The targets of issue #10.
const (
	defaultMaxRatio = 1.5
	defaultMaxRSSMB = 100
)

// inScope is the one file the scripted agent edits and the floor commits.
const inScope = "src/player/jump.gd"

func taskBody(policy string) string {
	return "Tune the jump.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [" + inScope + "]\nfiles: [design/gdd.md]\nrunPolicy: " + policy + "\n```\n"
}

// blockingReview sends the -review-fix scenario into its one fix pass.
const blockingReview = `{"blockers":[{"message":"Make it snappier still."}],"warnings":[],"summary":"Not yet.","needsFix":true}`

type config struct {
	files      int
	rounds     int
	reportOnly bool
	maxRatio   float64
	maxRSSMB   int
	agentUser  string
	sandbox    string
	// baselineAgentUser is the agent-user the baseline runs with ("" is agentUser's).
	baselineAgentUser string
	keep              bool
	traceGit          bool
	reviewFix         bool
	baseline          string
	work              string

	// apiLatency delays every REST answer (through the timing proxy): GitHub is not on the
	// runner's loopback, and each call in series on the run's path costs a round trip.
	apiLatency time.Duration
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == wrapFlag {
		os.Exit(wrapChild(os.Args[2:]))
	}
	var c config
	flag.IntVar(&c.files, "files", 30000, "files in the generated repository")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds of (action, git CLI floor)")
	flag.BoolVar(&c.reportOnly, "report-only", false, "print the results but never fail on a missed target (CI)")
	flag.Float64Var(&c.maxRatio, "max-ratio", defaultMaxRatio, "target: median whole run / median git CLI floor")
	flag.IntVar(&c.maxRSSMB, "max-rss-mb", defaultMaxRSSMB, "target: peak RSS of the action and the processes it started, in MB")
	flag.StringVar(&c.agentUser, "agent-user", "auto", "the action's agent-user input: auto (the action's default: confined, a uid leased for the run, when the studio runs as root); none runs the agent unconfined")
	flag.StringVar(&c.sandbox, "agent-sandbox", "auto", "the action's agent-sandbox input: auto (the default), require, or off (the uid jail)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory")
	flag.BoolVar(&c.traceGit, "trace-git", false, "log every git process the action starts (a wrapper on PATH; adds its own cost) and print them after round 1")
	flag.StringVar(&c.baseline, "baseline", "", "a studio binary built from another commit (or \"self\": this one), run in every round too (in a world of its own) for a before/after comparison under the same load")
	flag.StringVar(&c.baselineAgentUser, "baseline-agent-user", "", "the agent-user the baseline runs with (default -agent-user): -baseline self -baseline-agent-user none measures what confinement costs, in the same rounds")
	flag.BoolVar(&c.reviewFix, "review-fix", false, "run with review on and one fix pass (the first review blocks) instead of review: false; the floor still commits once")
	flag.DurationVar(&c.apiLatency, "api-latency", 0, "answer every REST call this much later (through a timing proxy; git's HTTP is not delayed), as a GitHub a round trip away: what the calls in series on the run's path cost (the floor makes none, so compare with -baseline, not the ratio)")
	flag.StringVar(&c.work, "work", "", "work directory (default: a new temporary directory)")
	flag.Parse()
	if c.files < 10 || c.rounds < 1 {
		fmt.Fprintln(os.Stderr, "perfbench: -files must be at least 10 and -rounds at least 1")
		os.Exit(2)
	}
	ok, err := bench(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfbench:", err)
		os.Exit(1)
	}
	if !ok && !c.reportOnly {
		os.Exit(1)
	}
}

// round is one (a)/(b) pair.
type round struct {
	action, floor time.Duration
	rssKB         int64
	selfRSSKB     int64 // the studio process's own peak, of rssKB
	api, gitReqs  int
	start         time.Time // when the action started, for the git trace
	baseline      time.Duration
	baselineRSSKB int64
	trace         string // -trace-git's report of round 1
	apiWait       time.Duration
	apiCalls      int
	apiSpans      string // the REST calls, one per line, when traced
	containment   string // the run's containment line, from its job summary
	baselineTrace string
}

func bench(c config) (bool, error) {
	work := c.work
	if work == "" {
		d, err := os.MkdirTemp("", "studio-perfbench-")
		if err != nil {
			return false, err
		}
		work = d
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return false, err
	}
	// The agent may run as another uid: the binaries and worlds must be reachable by it.
	if err := os.Chmod(work, 0o755); err != nil {
		return false, err
	}
	if !c.keep {
		defer os.RemoveAll(work)
	}
	printMachine(c)

	start := time.Now()
	bin := filepath.Join(work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return false, err
	}
	studio, codexBin := filepath.Join(bin, "studio"), filepath.Join(bin, "codex")
	for _, b := range [][2]string{{studio, "./cmd/studio"}, {codexBin, "./internal/fakecodex/cmd/codex"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return false, fmt.Errorf("go build %s (run from the module root): %v\n%s", b[1], err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	seed := filepath.Join(work, "seed")
	if err := generate(seed, c.files); err != nil {
		return false, fmt.Errorf("generate the repository: %w", err)
	}
	fmt.Printf("setup: built the binaries and generated %d files in %s\n\n", c.files, time.Since(start).Round(time.Millisecond))

	pathEnv := os.Getenv("PATH")
	var traceLog string
	if c.traceGit {
		traceLog = filepath.Join(work, "git-trace.log")
		tbin := filepath.Join(work, "trace-bin")
		realGit, err := exec.LookPath("git")
		if err != nil {
			return false, err
		}
		if err := writeTracer(tbin, "git", realGit, traceLog); err != nil {
			return false, err
		}
		// The agent too, so the timeline shows when it ran; but a confined agent can neither
		// reach the bench's folders nor write its log (that is the sandbox), so only then.
		if c.agentUser == "none" || os.Geteuid() != 0 {
			if err := writeTracer(tbin, "codex", codexBin, traceLog); err != nil {
				return false, err
			}
			codexBin = filepath.Join(tbin, "codex")
		}
		pathEnv = tbin + string(os.PathListSeparator) + pathEnv
	}

	var rounds []round
	for i := 1; i <= c.rounds; i++ {
		baseline := c.baseline
		if baseline == "self" {
			baseline = studio
		}
		r, err := oneRound(c, work, seed, bins{self: self, studio: studio, baseline: baseline, codex: codexBin, pathEnv: pathEnv, traceLog: traceLog}, i)
		if err != nil {
			return false, fmt.Errorf("round %d: %w", i, err)
		}
		rounds = append(rounds, r)
		if i == 1 {
			fmt.Printf("containment (from the run's job summary): %s\n", r.containment)
		}
		fmt.Printf("round %d: whole run %7.3f s   git CLI floor %7.3f s   ratio %.2f   peak RSS %5.1f MB (studio %.1f)   (%d API requests, %d git HTTP requests)\n",
			i, r.action.Seconds(), r.floor.Seconds(), r.action.Seconds()/r.floor.Seconds(), float64(r.rssKB)/1024, float64(r.selfRSSKB)/1024, r.api, r.gitReqs)
		fmt.Print(r.trace)
		if c.baseline != "" {
			fmt.Printf("         baseline %7.3f s   ratio %.2f   peak RSS %5.1f MB\n", r.baseline.Seconds(), r.baseline.Seconds()/r.floor.Seconds(), float64(r.baselineRSSKB)/1024)
			fmt.Print(r.baselineTrace)
		}

	}
	var as, fs []time.Duration
	var rss int64
	for _, r := range rounds {
		as, fs = append(as, r.action), append(fs, r.floor)
		rss = max(rss, r.rssKB)
	}
	ma, mf := median(as), median(fs)
	if c.baseline != "" {
		var bs []time.Duration
		for _, r := range rounds {
			bs = append(bs, r.baseline)
		}
		fmt.Printf("\nbaseline %s: median whole run %.3f s, ratio %.2f\n", c.baseline, median(bs).Seconds(), median(bs).Seconds()/mf.Seconds())
	}
	ratio := ma.Seconds() / mf.Seconds()
	rssMB := float64(rss) / 1024
	fmt.Printf("\nmedian: whole run %.3f s, git CLI floor %.3f s, ratio %.2f (target <= %.2f)\n", ma.Seconds(), mf.Seconds(), ratio, c.maxRatio)
	fmt.Printf("peak RSS of the action (studio and the processes it waited for): %.1f MB (target <= %d MB)\n", rssMB, c.maxRSSMB)
	ok := true
	if ratio > c.maxRatio {
		fmt.Printf("MISSED: the whole run takes %.2fx the git CLI floor at %d files\n", ratio, c.files)
		ok = false
	}
	if rssMB > float64(c.maxRSSMB) {
		fmt.Printf("MISSED: peak RSS %.1f MB\n", rssMB)
		ok = false
	}
	if c.reportOnly {
		fmt.Println("(report only: targets are not enforced)")
	} else if ok {
		fmt.Println("targets met")
	}
	if c.keep {
		fmt.Println("work directory kept:", work)
	}
	return ok, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printMachine(c config) {
	model := "unknown"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	gitVersion, _ := exec.Command("git", "version").Output()
	load, _ := os.ReadFile("/proc/loadavg")
	agent := "unconfined (agent-user none: the agent runs as the studio's own user)"
	if c.agentUser != "none" {
		agent = "agent-user " + c.agentUser + ", agent-sandbox " + c.sandbox
		if c.agentUser == "auto" && c.sandbox == "auto" {
			agent += " (what users get by default)"
		}
	}
	fmt.Printf("machine: %d CPUs (%s), %s %s/%s, %s", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH, gitVersion)
	fmt.Printf("studio runs as uid %d; agent %s\n", os.Getuid(), agent)
	if len(load) > 0 {
		fmt.Printf("load average at start: %s", load)
	}
	fmt.Printf("repository: %d files; rounds: %d\n", c.files, c.rounds)
	if c.apiLatency > 0 {
		fmt.Printf("every REST answer delayed %v (-api-latency): compare the whole runs with -baseline; the floor makes no REST call\n", c.apiLatency)
	}
}

// generate writes a studio project with n files in all (the sandbox's default files plus filler
// spread over directories of 25 files, 40 directories a module) and commits it.
func generate(dir string, n int) error {
	files := sandbox.DefaultFiles("fast-prototype")
	for p, content := range files {
		if err := writeFile(filepath.Join(dir, p), content); err != nil {
			return err
		}
	}
	for i := 0; i < n-len(files); i++ {
		p := filepath.Join(dir, "assets", fmt.Sprintf("m%03d", i/1000), fmt.Sprintf("d%02d", i/25%40), fmt.Sprintf("f%06d.txt", i))
		if err := writeFile(p, fmt.Sprintf("asset %d\n%s\n", i, strings.Repeat("x", i%97))); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "Start Hop"}} {
		if err := gitIn(dir, nil, args...); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// gitEnv is a neutral environment for the bench's own git: no user or system config.
func gitEnv(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid",
		"GIT_AUTHOR_DATE=1704067200 +0000", "GIT_COMMITTER_DATE=1704067200 +0000", "GIT_TERMINAL_PROMPT=0"}
	return append(env, extra...)
}

func gitIn(dir string, extra []string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(extra...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// bins are the executables a round runs.
type bins struct {
	self, studio, baseline, codex, pathEnv string
	traceLog                               string // the tracer's log, "" without -trace-git
}

func oneRound(c config, work, seed string, b bins, i int) (round, error) {
	dir := filepath.Join(work, fmt.Sprintf("round-%d", i))
	defer func() {
		if !c.keep {
			os.RemoveAll(dir)
		}
	}()
	content := fmt.Sprintf("extends Node\n\nconst JUMP_VELOCITY = -%d.0\n", 400+i)
	w, err := newWorld(filepath.Join(dir, "studio"), seed)
	if err != nil {
		return round{}, err
	}
	defer w.Close()
	// (a) the whole run.
	r, err := runAction(c, w, b, b.studio, content)
	if err != nil {
		return round{}, err
	}
	if b.traceLog != "" {
		if i == 1 {
			r.trace = traceReport(b.traceLog, r.start, r.action) +
				fmt.Sprintf("  REST API: %d calls, %.0f ms waiting on the emulator's answers (through a timing proxy)\n", r.apiCalls, r.apiWait.Seconds()*1000) + r.apiSpans
		}
		os.Remove(b.traceLog)
	}
	// The same run by the baseline binary, in a world of its own (the run above moved this one's
	// workspace, remote and runner temp on).
	if b.baseline != "" {
		bw, err := newWorld(filepath.Join(dir, "baseline"), seed)
		if err != nil {
			return round{}, err
		}
		defer bw.Close()
		bc := c
		if c.baselineAgentUser != "" {
			bc.agentUser = c.baselineAgentUser
		}
		br, err := runAction(bc, bw, b, b.baseline, content)
		if err != nil {
			return round{}, fmt.Errorf("baseline: %w", err)
		}
		if b.traceLog != "" {
			if i == 1 {
				r.baselineTrace = traceReport(b.traceLog, br.start, br.action) +
					fmt.Sprintf("  REST API: %d calls, %.0f ms waiting on the emulator's answers (through a timing proxy)\n", br.apiCalls, br.apiWait.Seconds()*1000) + br.apiSpans
			}
			os.Remove(b.traceLog)
		}
		r.baseline, r.baselineRSSKB = br.action, br.rssKB
	}
	// (b) the git CLI floor on an equivalent clone: the same edit, then status, add, commit, push
	// to the same emulator.
	floorDir := filepath.Join(dir, "floor")
	if err := gitIn(filepath.Dir(floorDir), nil, "clone", "-q", w.Emu.GitURL(sandbox.Owner, sandbox.Repo), floorDir); err != nil {
		return round{}, err
	}
	if err := os.WriteFile(filepath.Join(floorDir, inScope), []byte(content), 0o644); err != nil {
		return round{}, err
	}
	auth := "http.extraheader=AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+w.Token))
	settle()
	t0 := time.Now()
	for _, args := range [][]string{
		{"status", "--porcelain"},
		{"add", "--", inScope},
		{"commit", "-q", "-m", "gameplay-programmer: Tune the jump"},
		{"-c", auth, "push", "-q", "origin", "HEAD:refs/heads/floor/task-1"},
	} {
		if err := gitIn(floorDir, nil, args...); err != nil {
			return round{}, fmt.Errorf("floor: %w", err)
		}
	}
	r.floor = time.Since(t0)
	return r, nil
}

// settle writes the page cache's dirty pages out before a timed run: the setup wrote tens of
// thousands of files, and their writeback would otherwise run during the run that follows.
func settle() { syscall.Sync() }

// newWorld is the sandbox's world with the generated repository as the remote's main and the
// workspace checked out at it, as actions/checkout leaves a runner's workspace.
func newWorld(dir, seed string) (*sandbox.World, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w, err := sandbox.New(sandbox.Options{Dir: dir})
	if err != nil {
		return nil, err
	}
	bare := filepath.Join(dir, "remote", sandbox.Owner, sandbox.Repo+".git")
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{seed, []string{"push", "-q", "--force", bare, "main:main"}},
		{w.Workspace, []string{"fetch", "-q", "origin", "main"}},
		{w.Workspace, []string{"reset", "-q", "--hard", "FETCH_HEAD"}},
	} {
		if err := gitIn(step.dir, nil, step.args...); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := warmEmulator(w); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// warmEmulator reads the base's tip commit through the REST API once, before anything is timed.
// The emulator reads objects in-process and loads a pack's index at its first read; the pack
// just pushed holds the 30,000 files, and loading its index would otherwise land in the timed
// run, on the cores the studio uses, as the first REST call that reads an object (the lock's
// commit). GitHub's servers are warm, and their work is not the runner's.
func warmEmulator(w *sandbox.World) error {
	api := w.Emu.URL() + "/api/v3/repos/" + sandbox.Owner + "/" + sandbox.Repo
	get := func(u string, into any) error {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+w.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("warm the emulator: GET %s: %s", u, resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(into)
	}
	var ref struct {
		Object struct {
			SHA string `json:"sha"`
		} `json:"object"`
	}
	if err := get(api+"/git/ref/heads/main", &ref); err != nil {
		return err
	}
	var commit map[string]any
	return get(api+"/git/commits/"+ref.Object.SHA, &commit)
}

// runAction runs one studio binary's whole run on a new task issue in w.
func runAction(c config, w *sandbox.World, b bins, studio, content string) (round, error) {
	policy := "{review: false}"
	script := fakecodex.Script{Calls: []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: inScope, Content: content}}, FinalMessage: "Tuned the jump."}}}
	if c.reviewFix {
		policy = "{review: true, maxFixPasses: 1}"
		script.Calls = append(script.Calls, fakecodex.Call{Edits: []fakecodex.Edit{{Write: inScope, Content: content + "# snappier\n"}}, FinalMessage: "Snappier."})
		script.Reviews = []fakecodex.Call{{FinalMessage: blockingReview}, {FinalMessage: fakecodex.PassingReview}}
	}
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "Tune the jump", Body: taskBody(policy)})
	if err != nil {
		return round{}, err
	}
	id, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, is.Number, sandbox.Writer, "/studio run")
	if err != nil {
		return round{}, err
	}
	payload, err := w.Emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, is.Number, id, sandbox.Writer)
	if err != nil {
		return round{}, err
	}
	// The fake Codex asks this process for its calls: its CODEX_HOME only names the server.
	ctl, err := fakecodex.StartControl(script)
	if err != nil {
		return round{}, err
	}
	defer ctl.Close()
	if err := fakecodex.WriteControlFile(filepath.Join(w.RunnerTemp, "codex-home"), ctl.URL()); err != nil {
		return round{}, err
	}
	// The fake Codex reaches its control server through the egress proxy, as a mirror on the
	// runner on the allow-list: the default confinement, network included, is what is measured.
	extra := map[string]string{"INPUT_CODEX-PATH": b.codex, "PATH": b.pathEnv, "INPUT_ALLOW-HOSTS": ctl.Addr()}
	var api *apiTimer
	if b.traceLog != "" || c.apiLatency > 0 {
		// The REST calls go through a timing proxy: how long the run waited on the API.
		if api, err = newAPITimer(w.Emu.URL(), c.apiLatency); err != nil {
			return round{}, err
		}
		defer api.close()
		extra["GITHUB_API_URL"] = api.url + "/api/v3"
	}
	extra["INPUT_AGENT-USER"], extra["INPUT_AGENT-SANDBOX"] = c.agentUser, c.sandbox
	envMap, err := w.Env("issue_comment", payload, extra)
	if err != nil {
		return round{}, err
	}
	var env []string
	for k, v := range envMap {
		env = append(env, k+"="+v)
	}
	before := len(w.Emu.Requests())
	settle()
	start := time.Now()
	res, stderr, err := runWrapped(b.self, env, studio, "action")
	if err != nil {
		return round{}, err
	}
	r := round{start: start}
	r.action, r.rssKB, r.selfRSSKB = res.Wall, max(res.SelfMaxRSSKB, res.ChildrenMaxRSSKB), res.SelfMaxRSSKB
	if api != nil {
		r.apiWait, r.apiCalls = api.total()
		r.apiSpans = api.report(start)
	}
	for _, q := range w.Emu.Requests()[before:] {
		if q.Git {
			r.gitReqs++
		} else {
			r.api++
		}
	}
	outputs, _ := w.Outputs()
	if res.Exit != 0 || outputs["status"] != "done" {
		return round{}, fmt.Errorf("%s exited %d with status %q:\n%s", studio, res.Exit, outputs["status"], stderr)
	}
	// What containment the run really got, as its job summary says it.
	summary, _ := w.Summary()
	for _, line := range strings.Split(summary, "\n") {
		if strings.Contains(line, "Containment") || strings.Contains(line, "Unconfined") {
			r.containment = strings.TrimSpace(line)
		}
	}
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/heads/")
	if err != nil {
		return round{}, err
	}
	if _, ok := refs["refs/heads/studio/task-"+strconv.Itoa(is.Number)]; !ok {
		return round{}, fmt.Errorf("%s pushed no task branch (refs %v)", studio, refs)
	}
	return r, nil
}

// wrapFlag re-executes perfbench as a thin parent of the studio, so RUSAGE_CHILDREN covers the
// studio and the processes it waited for (git), and nothing else the bench ran (go build, the
// emulator's http-backend).
const wrapFlag = "-rusage-wrap"

type wrapResult struct {
	Wall             time.Duration
	Exit             int
	SelfMaxRSSKB     int64 // the studio process's own ru_maxrss (wait4)
	ChildrenMaxRSSKB int64 // RUSAGE_CHILDREN of the wrapper: the largest of the studio and its descendants
}

func runWrapped(self string, env []string, argv ...string) (wrapResult, string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return wrapResult{}, "", err
	}
	cmd := exec.Command(self, append([]string{wrapFlag}, argv...)...)
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{pw}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return wrapResult{}, "", err
	}
	pw.Close()
	data, _ := io.ReadAll(pr)
	pr.Close()
	if err := cmd.Wait(); err != nil {
		return wrapResult{}, stderr.String(), fmt.Errorf("rusage wrapper: %v\n%s", err, stderr.String())
	}
	var res wrapResult
	if err := json.Unmarshal(data, &res); err != nil {
		return wrapResult{}, stderr.String(), fmt.Errorf("rusage wrapper: %v", err)
	}
	return res, stderr.String(), nil
}

func wrapChild(argv []string) int {
	out := os.NewFile(3, "result")
	if len(argv) == 0 || out == nil {
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	t0 := time.Now()
	err := cmd.Run()
	res := wrapResult{Wall: time.Since(t0)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.Exit = exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.SelfMaxRSSKB = rssKB(ru.Maxrss)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		res.ChildrenMaxRSSKB = rssKB(ru.Maxrss)
	}
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return 2
	}
	return 0
}

// rssKB converts ru_maxrss to KiB: Linux reports KiB, macOS bytes.
func rssKB(v int64) int64 {
	if runtime.GOOS == "darwin" {
		return v / 1024
	}
	return v
}

// writeTracer puts a wrapper of the program real, named name, in dir that logs each process's
// duration and arguments.
func writeTracer(dir, name, real, log string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	script := fmt.Sprintf("#!/bin/sh\ns=$(date +%%s%%N)\n%q \"$@\"\nrc=$?\ne=$(date +%%s%%N)\necho \"$s $e %s $*\" >> %q\nexit $rc\n", real, name, log)
	return os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755)
}

// traceReport lists the git processes of the traced run with their start (from the action's
// start) and duration, and how much of the run had at least one running.
func traceReport(log string, start time.Time, total time.Duration) string {
	var b strings.Builder
	data, err := os.ReadFile(log)
	if err != nil {
		return fmt.Sprintf("  (no git trace: %v)\n", err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	type span struct{ s, e int64 }
	var spans []span
	fmt.Fprintf(&b, "  processes the action started in round 1: %d (start, duration; the tracer adds a few ms to each)\n", len(lines))
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		if len(f) < 3 {
			continue
		}
		s, _ := strconv.ParseInt(f[0], 10, 64)
		e, _ := strconv.ParseInt(f[1], 10, 64)
		spans = append(spans, span{s, e})
		args := f[2]
		if len(args) > 110 {
			args = args[:110] + "..."
		}
		fmt.Fprintf(&b, "    %7.1f ms %6.1f ms  %s\n", float64(s-start.UnixNano())/1e6, float64(e-s)/1e6, args)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].s < spans[j].s })
	var busy, end int64
	for _, sp := range spans {
		if sp.s > end {
			busy += sp.e - sp.s
			end = sp.e
		} else if sp.e > end {
			busy += sp.e - end
			end = sp.e
		}
	}
	fmt.Fprintf(&b, "  git or the agent running during %.0f ms of the %.0f ms run; nothing of them during the other %.0f ms\n",
		float64(busy)/1e6, total.Seconds()*1000, total.Seconds()*1000-float64(busy)/1e6)
	return b.String()
}

// apiTimer is a reverse proxy in front of the emulator that adds up how long each REST call took.
type apiTimer struct {
	url   string
	srv   *http.Server
	mu    sync.Mutex
	wait  time.Duration
	calls int
	spans []apiSpan
}

// apiSpan is one REST call as the timing proxy saw it.
type apiSpan struct {
	start time.Time
	took  time.Duration
	what  string
}

func newAPITimer(target string, latency time.Duration) (*apiTimer, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &apiTimer{url: "http://" + ln.Addr().String()}
	proxy := httputil.NewSingleHostReverseProxy(u)
	t.srv = &http.Server{ReadHeaderTimeout: 30 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		time.Sleep(latency)
		proxy.ServeHTTP(w, r)
		t.mu.Lock()
		took := time.Since(t0)
		t.wait += took
		t.calls++
		t.spans = append(t.spans, apiSpan{t0, took, r.Method + " " + r.URL.Path})
		t.mu.Unlock()
	})}
	go func() { _ = t.srv.Serve(ln) }()
	return t, nil
}

func (t *apiTimer) total() (time.Duration, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wait, t.calls
}

// report lists the calls with their start (from the action's start) and duration.
func (t *apiTimer) report(start time.Time) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, sp := range t.spans {
		fmt.Fprintf(&b, "    %7.1f ms %6.1f ms  %s\n", float64(sp.start.Sub(start))/1e6, float64(sp.took)/1e6, sp.what)
	}
	return b.String()
}

func (t *apiTimer) close() { _ = t.srv.Close() }
