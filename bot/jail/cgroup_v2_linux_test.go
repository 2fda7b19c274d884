package jail

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The cgroup v2 code cannot run for real on a host whose memory and pids controllers are v1 (as
// CI's): these tests stand a folder in for the kernel's cgroupfs and check what the studio writes
// and reads there.

// fakeCgroupfs writes files under root (name -> content) and makes new cgroups the way the kernel
// would: with their control files, removed whole unless processes remain and cgroup.kill was not
// written.
func fakeCgroupfs(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk, rm := makeCgroupDir, removeCgroupDir
	t.Cleanup(func() { makeCgroupDir, removeCgroupDir = mk, rm })
	makeCgroupDir = func(p string) error {
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"memory.max", "memory.swap.max", "memory.oom.group", "memory.events", "pids.max", "pids.events", "cgroup.procs", "cgroup.kill"} {
			if err := os.WriteFile(filepath.Join(p, f), nil, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	removeCgroupDir = func(p string) error {
		if _, err := os.Stat(p); err != nil {
			return syscall.ENOENT
		}
		procs, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		killed, _ := os.ReadFile(filepath.Join(p, "cgroup.kill"))
		if strings.TrimSpace(string(procs)) != "" && string(killed) != "1" {
			return syscall.EBUSY
		}
		return os.RemoveAll(p)
	}
	return root
}

func readFake(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCgroupV2CallUnderARunnerService: the studio runs in a service's cgroup (processes of its
// own, so it cannot hand controllers on); the calls' cgroups go under the nearest ancestor that
// does, the budget's default comes from the service's own limit, and a call's cgroup gets its
// limits, says which one was reached, and is killed and removed.
func TestCgroupV2CallUnderARunnerService(t *testing.T) {
	root := fakeCgroupfs(t, map[string]string{
		"cgroup.controllers":                                 "cpuset cpu io memory hugetlb pids",
		"cgroup.subtree_control":                             "memory pids",
		"system.slice/cgroup.subtree_control":                "memory pids",
		"system.slice/memory.max":                            "max",
		"system.slice/runner.service/cgroup.subtree_control": "",
		"system.slice/runner.service/memory.max":             "1610612736",
	})
	cg, err := findCgroups(root, []byte("0::/system.slice/runner.service\n"), 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !cg.v2 || cg.memParent != filepath.Join(root, "system.slice") || cg.pidsParent != cg.memParent {
		t.Fatalf("calls go under %+v, want v2 under system.slice", cg)
	}
	if cg.available != 1610612736 {
		t.Errorf("available %d, want the service's 1.5 GiB", cg.available)
	}
	if got := DefaultMemory(cg.available); got != 1610612736/4*3 {
		t.Errorf("default budget %s under a 1.5 GiB service", FormatBytes(got))
	}

	cc, err := cg.create(256<<20, 100)
	if err != nil {
		t.Fatal(err)
	}
	dir := cc.mem
	if filepath.Dir(dir) != cg.memParent || !strings.HasPrefix(filepath.Base(dir), cgroupPrefix) {
		t.Fatalf("the call's cgroup is %s", dir)
	}
	for file, want := range map[string]string{"memory.max": "268435456", "memory.swap.max": "0", "memory.oom.group": "1", "pids.max": "100"} {
		if got := readFake(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if got := cc.procsFiles(); len(got) != 1 || got[0] != filepath.Join(dir, "cgroup.procs") {
		t.Errorf("the init enters %v", got)
	}
	if cc.limitHit() != nil {
		t.Errorf("a fresh cgroup reached %+v", cc.limitHit())
	}
	mustWrite(t, filepath.Join(dir, "pids.events"), "max 3\n", 0o644)
	if hit := cc.limitHit(); hit == nil || hit.Resource != LimitProcesses || hit.Value != 100 {
		t.Errorf("pids.events max 3 read as %+v", hit)
	}
	// Memory first: an OOM kill ended the call, whatever else happened.
	mustWrite(t, filepath.Join(dir, "memory.events"), "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 1\n", 0o644)
	if hit := cc.limitHit(); hit == nil || hit.Resource != LimitMemory || hit.Value != 256<<20 {
		t.Errorf("memory.events oom_kill 2 read as %+v", hit)
	}
	// A process left in the cgroup: cgroup.kill, then the folder goes.
	mustWrite(t, filepath.Join(dir, "cgroup.procs"), "4194000\n", 0o644)
	hit, err := cc.end()
	if err != nil || hit == nil || hit.Resource != LimitMemory {
		t.Fatalf("end: %+v, %v", hit, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call's cgroup was not removed: %v", err)
	}
}

// TestCgroupV2EnablesControllersWhereItMay: an ancestor without processes of its own that does not
// hand the controllers on yet is asked to; a host where no cgroup can is refused with the reason.
func TestCgroupV2EnablesControllersWhereItMay(t *testing.T) {
	root := fakeCgroupfs(t, map[string]string{
		"cgroup.controllers":                "memory pids",
		"cgroup.subtree_control":            "",
		"job/cgroup.subtree_control":        "",
		"job/studio/cgroup.subtree_control": "",
		"job/studio/memory.max":             "max",
	})
	cg, err := findCgroups(root, []byte("0::/job/studio\n"), 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	if cg.memParent != filepath.Join(root, "job") || readFake(t, filepath.Join(root, "job/cgroup.subtree_control")) != "+memory +pids" {
		t.Errorf("calls go under %s; job's subtree_control %q", cg.memParent, readFake(t, filepath.Join(root, "job/cgroup.subtree_control")))
	}
	if cg.available != 8<<30 || DefaultMemory(cg.available) != 6<<30 {
		t.Errorf("with no cgroup limit the host's RAM counts: available %d", cg.available)
	}
	if _, err := findCgroups(root, []byte("1:name=systemd:/\n"), 8<<30); err == nil {
		t.Error("a process in no v2 cgroup was given one")
	}
}

// TestCgroupV1Detection: the hybrid layout (v1 memory and pids, a unified hierarchy beside them)
// is read as v1, with the studio's own cgroups as the parents.
func TestCgroupV1Detection(t *testing.T) {
	root := fakeCgroupfs(t, map[string]string{
		"memory/memory.limit_in_bytes":        "9223372036854771712",
		"memory/ci/job/memory.limit_in_bytes": "1610612736",
		"pids/pids.max":                       "max",
		"unified/cgroup.controllers":          "hugetlb",
	})
	cg, err := findCgroups(root, []byte("9:name=systemd:/\n8:pids:/\n4:memory:/ci/job\n0::/\n"), 24<<30)
	if err != nil {
		t.Fatal(err)
	}
	if cg.v2 || cg.memParent != filepath.Join(root, "memory/ci/job") || cg.pidsParent != filepath.Join(root, "pids") || cg.available != 1610612736 {
		t.Errorf("hybrid read as %+v", cg)
	}
}
