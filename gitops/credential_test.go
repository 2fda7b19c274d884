package gitops

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The macOS hand-off (a pipe of credentialCopies lines) runs here on Linux: a real fetch and
// push authenticate through it.
func TestPipeHandoffFetchesAndPushes(t *testing.T) {
	saved := handOff
	handOff = pipeHandoff
	t.Cleanup(func() { handOff = saved })
	emu, repo := remote(t) // CheckoutBase fetches through the pipe
	ctx := context.Background()
	write(t, repo.Dir, "a.txt", "through a pipe\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/pipe"); err != nil {
		t.Fatal(err)
	}
	if ok, err := repo.RemoteBranchExists(ctx, "studio/pipe"); err != nil || !ok {
		t.Fatalf("pushed branch: exists=%v err=%v", ok, err)
	}
	var pushers []string
	for _, r := range emu.Requests() {
		if r.Git && strings.Contains(r.Path, "git-receive-pack") && r.User != "" {
			pushers = append(pushers, r.User)
		}
	}
	if len(pushers) == 0 {
		t.Fatal("no authenticated push reached the remote")
	}
	wrong := &Repo{Dir: repo.Dir, Token: "ghs_wrongPipeToken", RemoteURL: repo.RemoteURL, StateDir: repo.StateDir}
	wrong.tip = repo.tip
	if err := wrong.Push(ctx, "studio/pipe-wrong"); err == nil || strings.Contains(err.Error(), "ghs_wrongPipeToken") {
		t.Fatalf("push with a wrong token through the pipe: err = %v (must fail and not echo it)", err)
	}
}

// Each `get` takes one copy, so git may ask credentialCopies times in one command; the next ask
// finds the pipe empty and git gets no credential (it fails, it does not hang).
func TestPipeHelperAnswersEachAskOnce(t *testing.T) {
	h, err := pipeHandoff(token)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	ask := func() (string, error) {
		cmd := exec.Command("git", "-c", "credential.helper=", "-c", "credential.helper="+h.helper, "credential", "fill")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "HOME=" + t.TempDir()}
		cmd.ExtraFiles = []*os.File{h.file}
		cmd.Stdin = strings.NewReader("protocol=https\nhost=github.com\n\n")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	for i := range credentialCopies {
		out, err := ask()
		if err != nil || !strings.Contains(out, "username=x-access-token\n") || !strings.Contains(out, "password="+token+"\n") {
			t.Fatalf("ask %d: err=%v out=%q", i+1, err, out)
		}
	}
	if out, err := ask(); err == nil || strings.Contains(out, token) {
		t.Fatalf("ask %d after the copies ran out: err=%v out=%q (want a failure)", credentialCopies+1, err, out)
	}
}

func TestPipeHandoffRefusesTokensThatBreakTheProtocol(t *testing.T) {
	for _, tok := range []string{"", "a\nb", "a\rb", strings.Repeat("x", maxPipeToken+1)} {
		if h, err := pipeHandoff(tok); err == nil {
			h.close()
			t.Errorf("pipeHandoff(%q...) accepted", tok[:min(len(tok), 8)])
		}
	}
}
