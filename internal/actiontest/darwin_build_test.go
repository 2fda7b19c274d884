package actiontest

import (
	"debug/macho"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The studio is released for macOS runners but only Linux runs these tests: cross-compiling the
// binary for darwin/amd64 and darwin/arm64 keeps the port (the _linux/_other files of gitops,
// bot/jail and cmd/studio) from rotting. Two whole builds: tens of seconds on two cores.
func TestStudioCrossCompilesForMacOS(t *testing.T) {
	for _, c := range []struct {
		arch string
		cpu  macho.Cpu
	}{{"amd64", macho.CpuAmd64}, {"arm64", macho.CpuArm64}} {
		t.Run(c.arch, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "studio-darwin-"+c.arch)
			cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/studio")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH="+c.arch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOOS=darwin GOARCH=%s go build ./cmd/studio: %v\n%s", c.arch, err, out)
			}
			f, err := macho.Open(bin)
			if err != nil {
				t.Fatalf("not a Mach-O binary: %v", err)
			}
			defer f.Close()
			if f.Cpu != c.cpu || f.Type != macho.TypeExec {
				t.Errorf("Mach-O cpu %v type %v, want %v executable", f.Cpu, f.Type, c.cpu)
			}
		})
	}
}
