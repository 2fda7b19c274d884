package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSandboxSetup is what a run pays once: the uid's lease, the user namespace of the
// idmapped mount, the probe call.
func BenchmarkSandboxSetup(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	ws := b.TempDir()

	for i := 0; i < b.N; i++ {
		j, err := Setup(context.Background(), Options{Sandbox: SandboxRequire, Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		j.Close(context.Background())
	}
}

// BenchmarkSandboxCall is what each confined call pays: a sandboxed /bin/true in a workspace
// with a .git, as users get it by default. It does not depend on the workspace's size.
func BenchmarkSandboxCall(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	ws := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	j, err := Setup(context.Background(), Options{Sandbox: SandboxRequire, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(context.Background())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scratch := b.TempDir()
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: scratch, Reach: []string{"/usr/bin"}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := confinedOutput(call, cmd, true); err != nil {
			b.Fatal(err)
		}
		if _, err := call.End(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSandboxCallManyFiles is BenchmarkSandboxCall in a workspace of 100,000 files in
// 5,000 directories, with a submodule's .git file, checked out a few seconds before the calls
// (as a run's checkout is): what a call costs that grows with the workspace (the check for the
// .git entries a call may leave: one lstat per directory, a listing of the changed ones).
func BenchmarkSandboxCallManyFiles(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	ws := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	for d := 0; d < 5000; d++ {
		dir := filepath.Join(ws, "src", "m"+strconv.Itoa(d/100), "d"+strconv.Itoa(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 20; f++ {
			if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(f)+".gd"), []byte("x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "lib"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "lib", ".git"), []byte("gitdir: ../.git/modules/lib\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	// A directory changed in the two seconds before a call is listed again at its end (its
	// ctime proves nothing that close to the call's start): a run's checkout is older.
	time.Sleep(2100 * time.Millisecond)
	j, err := Setup(context.Background(), Options{Sandbox: SandboxRequire, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(context.Background())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scratch := b.TempDir()
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: scratch, Reach: []string{"/usr/bin"}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := confinedOutput(call, cmd, true); err != nil {
			b.Fatal(err)
		}
		if _, err := call.End(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
