// Command servebench measures `studio serve` under a burst (scripts or a person run it;
// docs/performance.md records it): it starts the GitHub emulator with a repository holding the
// studio workflow and the App installed, builds the studio binary and runs `studio serve` as its
// own process, then sends N signed `/studio run` deliveries (one per task issue) at a fixed rate
// over loopback HTTP, as GitHub would.
//
// It reports, from the server's own log line per delivery, the time from a delivery's arrival to
// its reaction accepted by the emulator (p50/p95/p99), the deliveries answered 503, the server's
// peak RSS (VmHWM) and its goroutines once every delivery ended (from /metrics). It is a
// benchmark, not a test: it fails only when a delivery is lost.
package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

const redeliverAfter = time.Second

const (
	appID   = 77
	appSlug = "bench-studio"
	secret  = "whsec-servebench"
	writer  = "octocat"
	task    = "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n```\n"
)

func main() {
	n := flag.Int("n", 500, "deliveries to send")
	rate := flag.Float64("rate", 100, "deliveries per second")
	studio := flag.String("studio", "", "the studio binary (built from ./cmd/studio when empty)")
	inFlight := flag.Int("max-in-flight", 0, "STUDIO_SERVE_MAX_IN_FLIGHT (the server's default when 0)")
	cpuprofile := flag.String("cpuprofile", "", "write the benchmark process's CPU profile (the emulator's) here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if err := bench(*n, *rate, *studio, *inFlight); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "servebench:", err)
		os.Exit(1)
	}
}

func bench(n int, rate float64, studio string, inFlight int) error {
	dir, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	emu, err := ghemu.New(ghemu.Options{Dir: filepath.Join(dir, "remote"), RateLimit: 1 << 30})
	if err != nil {
		return err
	}
	defer emu.Close()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".github/workflows/studio.yml"] = string(examples.Workflow)
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: sandbox.Owner, Name: sandbox.Repo, Files: files, Message: "Start"}); err != nil {
		return err
	}
	emu.AddUser(writer)
	if err := emu.SetRole(sandbox.Owner, sandbox.Repo, writer, ghemu.RoleWrite); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err := emu.AddApp(appID, appSlug, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err != nil {
		return err
	}
	inst, err := emu.InstallApp(appID, sandbox.Owner, sandbox.Repo)
	if err != nil {
		return err
	}
	private := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))

	// The deliveries, prepared before the clock starts.
	type delivery struct {
		id   string
		body []byte
	}
	ds := make([]delivery, n)
	for i := range ds {
		is, err := emu.CreateIssue(sandbox.Owner, sandbox.Repo, writer, ghemu.IssueSpec{Title: fmt.Sprintf("Task %d", i), Body: task})
		if err != nil {
			return err
		}
		cid, err := emu.AddComment(sandbox.Owner, sandbox.Repo, is.Number, writer, "/studio run")
		if err != nil {
			return err
		}
		p, err := emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, is.Number, cid, writer)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(p, &m); err != nil {
			return err
		}
		m["installation"] = map[string]any{"id": inst}
		body, _ := json.Marshal(m)
		ds[i] = delivery{id: fmt.Sprintf("bench-%04d", i), body: body}
	}

	if studio == "" {
		studio = filepath.Join(dir, "studio")
		if out, err := exec.Command("go", "build", "-o", studio, "./cmd/studio").CombinedOutput(); err != nil {
			return fmt.Errorf("build studio: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(studio, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("STUDIO_APP_ID=%d", appID), "STUDIO_APP_PRIVATE_KEY="+private, "STUDIO_WEBHOOK_SECRET="+secret,
		"GITHUB_API_URL="+strings.TrimSuffix(emu.APIURL(), "/"), "GITHUB_SERVER_URL="+emu.URL())
	if inFlight > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("STUDIO_SERVE_MAX_IN_FLIGHT=%d", inFlight))
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()

	addr := make(chan string, 1)
	var mu sync.Mutex
	acks := map[string]float64{}
	var took []float64
	outcomes := map[string]string{}
	ended := make(chan struct{}, n)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec struct {
				Msg      string  `json:"msg"`
				Addr     string  `json:"addr"`
				Delivery string  `json:"delivery"`
				Outcome  string  `json:"outcome"`
				Status   int     `json:"status"`
				AckMS    float64 `json:"ack_ms"`
				MS       float64 `json:"ms"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue
			}
			switch {
			case rec.Msg == "serving":
				addr <- rec.Addr
			case rec.Msg == "delivery" && rec.Status == 0: // the end of an accepted delivery
				mu.Lock()
				outcomes[rec.Delivery] = rec.Outcome
				if rec.AckMS > 0 {
					acks[rec.Delivery] = rec.AckMS
				}
				took = append(took, rec.MS)
				mu.Unlock()
				ended <- struct{}{}
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(time.Minute):
		return fmt.Errorf("studio serve did not start")
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var busy, accepted, other int
	redelivered := map[string]time.Duration{}
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i, d := range ds {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Add(1)
		go func(d delivery) {
			defer wg.Done()
			first := time.Now()
			for attempt := 1; ; attempt++ {
				code := post(client, base, d.id, d.body)
				mu.Lock()
				switch code {
				case http.StatusAccepted:
					accepted++
					if attempt > 1 {
						redelivered[d.id] = time.Since(first)
					}
					mu.Unlock()
					return
				case http.StatusServiceUnavailable:
					busy++
				default:
					other++
					mu.Unlock()
					return
				}
				mu.Unlock()
				// As a re-delivery would come: the same delivery id, a second later.
				time.Sleep(redeliverAfter)
			}
		}(d)
	}
	wg.Wait()
	sent := time.Since(start)
	for i := 0; i < accepted; i++ {
		select {
		case <-ended:
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("%d of %d accepted deliveries never ended", accepted-i, accepted)
		}
	}
	all := time.Since(start)
	goroutines := metric(client, base, "go_goroutines")
	hwm := procStatus(cmd.Process.Pid, "VmHWM")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	exitErr := cmd.Wait()

	var lat []float64
	for _, v := range acks {
		lat = append(lat, v)
	}
	sort.Float64s(lat)
	counts := map[string]int{}
	for _, o := range outcomes {
		counts[o]++
	}
	fmt.Printf("deliveries: %d sent in %s (%.0f/s), %d accepted, %d answered 503, %d other; all ended after %s\n",
		n, sent.Round(time.Millisecond), float64(n)/sent.Seconds(), accepted, busy, other, all.Round(time.Millisecond))
	fmt.Printf("outcomes: %v; dispatches: %d\n", counts, len(emu.Dispatches(sandbox.Owner, sandbox.Repo)))
	// A delivery answered 503 was acknowledged only once re-delivered: its latency, from the first
	// attempt, is the wait plus the accepted attempt's.
	var all2 []float64
	for id, v := range acks {
		all2 = append(all2, v+float64(redelivered[id].Microseconds())/1000)
	}
	sort.Float64s(all2)
	fmt.Printf("re-delivered after a 503: %d; from the first attempt (all %d): p50 %.1f ms, p95 %.1f ms, p99 %.1f ms\n",
		len(redelivered), len(all2), pct(all2, 50), pct(all2, 95), pct(all2, 99))
	fmt.Printf("arrival of the accepted attempt -> reaction (%d): p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		len(lat), pct(lat, 50), pct(lat, 95), pct(lat, 99), pct(lat, 100))
	sort.Float64s(took)
	fmt.Printf("delivery handled (%d), reaction, lock, status comment, dispatch, status comment: p50 %.0f ms, p95 %.0f ms\n", len(took), pct(took, 50), pct(took, 95))
	fmt.Printf("server: peak RSS %s, %s goroutines after the burst, CPU %s user + %s system; exit after SIGTERM: %v\n",
		hwm, goroutines, cmd.ProcessState.UserTime().Round(time.Millisecond), cmd.ProcessState.SystemTime().Round(time.Millisecond), exitErr)
	if other > 0 || len(lat) != accepted {
		return fmt.Errorf("%d deliveries got an unexpected answer, %d of %d accepted ones have no reaction", other, accepted-len(lat), accepted)
	}
	return nil
}

func post(c *http.Client, base, id string, body []byte) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/webhook", bytes.NewReader(body))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-GitHub-Event", "issue_comment")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

func metric(c *http.Client, base, name string) string {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	return "?"
}

func procStatus(pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
