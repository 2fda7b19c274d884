package jail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A cgroup per call bounds what a call may take of the host: its memory (tmpfs pages included:
// the kernel charges them to the writer's cgroup), with no swap to spill into, and its processes
// (threads included). The cgroup is made by the studio before the call and removed after it; the
// call's init enters it before it builds the call's root, so everything of the call is inside.
//
// Both cgroup layouts are handled, detected once at setup: the unified one (cgroup v2: GitHub's
// hosted runners) and the legacy one (v1, or the hybrid layout with v1 memory and pids
// hierarchies). The files are few and plain, so they are written here rather than through a
// cgroup library (the maintained one pulls in eBPF device filters and D-Bus for systemd, none of
// which a call needs).

// cgroupRoot is where hosts mount their cgroup filesystems.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupPrefix starts the name of every call's cgroup; the studio's pid follows, so that a setup
// can tell the cgroups of dead runs from those of live ones.
const cgroupPrefix = "codex-studio-"

// unlimitedV1 is the smallest v1 limit_in_bytes taken as no limit (the kernel shows "no limit" as
// the largest page-aligned int64).
const unlimitedV1 = int64(1) << 60

// makeCgroupDir and removeCgroupDir make and remove a cgroup: the kernel fills a new one with its
// control files and removes them with it (the unit tests stand in for the kernel).
var (
	makeCgroupDir   = func(p string) error { return os.Mkdir(p, 0o755) }
	removeCgroupDir = syscall.Rmdir
)

// cgroups is where this studio makes the cgroups of its calls.
type cgroups struct {
	v2 bool
	// memParent and pidsParent are the folders a call's cgroup is made in: on v2 both the same,
	// on v1 one per hierarchy (pidsParent is "" where the host has no pids hierarchy).
	memParent, pidsParent string
	// available is the memory the studio's cgroup (or the host, if less) allows: the default
	// budget is a fraction of it.
	available int64
}

// cgroupSeq numbers the calls' cgroups of this process (several jails may share a parent).
var cgroupSeq atomic.Uint64

// findCgroups detects the host's cgroup layout under root from the studio's own membership (the
// text of /proc/self/cgroup) and says where calls' cgroups go. hostMemory is the host's RAM.
func findCgroups(root string, self []byte, hostMemory int64) (*cgroups, error) {
	paths := map[string]string{} // controller ("" for the unified hierarchy) -> path
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "" {
			paths[""] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			paths[c] = f[2]
		}
	}
	c := &cgroups{available: hostMemory}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		p, ok := paths[""]
		if !ok {
			return nil, errors.New("the host mounts cgroup v2, but this process is in no v2 cgroup")
		}
		c.v2 = true
		own := filepath.Join(root, p)
		parent, err := v2Parent(root, own)
		if err != nil {
			return nil, err
		}
		c.memParent, c.pidsParent = parent, parent
		c.available = minLimit(c.available, chainLimit(root, own, "memory.max"))
		return c, nil
	}
	p, ok := paths["memory"]
	if !ok {
		return nil, errors.New("no memory cgroup: neither cgroup v2 nor a v1 memory hierarchy holds this process")
	}
	memRoot := filepath.Join(root, "memory")
	c.memParent = filepath.Join(memRoot, p)
	if _, err := os.Stat(filepath.Join(c.memParent, "memory.limit_in_bytes")); err != nil {
		return nil, fmt.Errorf("the v1 memory cgroup %s cannot be read: %w", c.memParent, err)
	}
	c.available = minLimit(c.available, chainLimit(memRoot, c.memParent, "memory.limit_in_bytes"))
	if p, ok := paths["pids"]; ok {
		if dir := filepath.Join(root, "pids", p); isDir(dir) {
			c.pidsParent = dir
		}
	}
	return c, nil
}

// v2Parent is the nearest cgroup, from the studio's own up, whose children get the memory and
// pids controllers. The studio's own cgroup has processes (the studio), and v2 lets only a cgroup
// without processes hand controllers to children, so outside the root the parent is an ancestor;
// the budget's default is taken from the studio's own chain, so the runner's limit still holds.
func v2Parent(root, own string) (string, error) {
	for dir := own; ; dir = filepath.Dir(dir) {
		if hasControllers(filepath.Join(dir, "cgroup.subtree_control")) {
			return dir, nil
		}
		if dir != own {
			// Enabling controllers for children is allowed where the cgroup has no processes
			// of its own; where it has, the write fails and the search goes on up.
			if writeControl(filepath.Join(dir, "cgroup.subtree_control"), "+memory +pids") == nil {
				return dir, nil
			}
		}
		if dir == root || !strings.HasPrefix(dir, root) {
			return "", errors.New("no cgroup v2 above the studio hands the memory and pids controllers to its children")
		}
	}
}

func hasControllers(subtreeControl string) bool {
	data, err := os.ReadFile(subtreeControl)
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	has := func(c string) bool {
		for _, x := range f {
			if x == c {
				return true
			}
		}
		return false
	}
	return has("memory") && has("pids")
}

// chainLimit is the smallest limit file holds from dir up to root; 0 when none is set.
func chainLimit(root, dir, file string) int64 {
	var least int64
	for {
		if n, ok := readLimit(filepath.Join(dir, file)); ok {
			least = minLimit(least, n)
		}
		if dir == root || !strings.HasPrefix(dir, root) {
			return least
		}
		dir = filepath.Dir(dir)
	}
}

// readLimit reads a limit file: "max" or a v1 "no limit" is no limit.
func readLimit(p string) (int64, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 || n >= unlimitedV1 {
		return 0, false
	}
	return n, true
}

// minLimit is the smaller of two limits, 0 meaning none.
func minLimit(a, b int64) int64 {
	switch {
	case a <= 0:
		return b
	case b <= 0 || a < b:
		return a
	}
	return b
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// sweepStale removes the call cgroups dead studios left (their processes killed first).
func (c *cgroups) sweepStale() {
	for _, parent := range c.parents() {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			if !ok || !e.IsDir() {
				continue
			}
			pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
				continue
			}
			_ = removeCgroup(filepath.Join(parent, e.Name()), c.v2)
		}
	}
}

func (c *cgroups) parents() []string {
	if c.v2 || c.pidsParent == "" {
		return []string{c.memParent}
	}
	return []string{c.memParent, c.pidsParent}
}

// callCgroup is one call's cgroup: one folder on v2, one per hierarchy on v1.
type callCgroup struct {
	v2        bool
	mem, pids string // folders; on v2 the same, on v1 pids is "" without a pids hierarchy
	memory    int64
	processes int64
}

// create makes a call's cgroup with its limits.
func (c *cgroups) create(memory, processes int64) (*callCgroup, error) {
	name := fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), cgroupSeq.Add(1))
	cc := &callCgroup{v2: c.v2, mem: filepath.Join(c.memParent, name), memory: memory, processes: processes}
	if c.v2 {
		cc.pids = cc.mem
	} else if c.pidsParent != "" {
		cc.pids = filepath.Join(c.pidsParent, name)
	}
	for _, d := range cc.dirs() {
		if err := makeCgroupDir(d); err != nil {
			_ = cc.remove()
			return nil, fmt.Errorf("make the call's cgroup: %w", err)
		}
	}
	mem, procs := strconv.FormatInt(memory, 10), strconv.FormatInt(processes, 10)
	type write struct {
		dir, file, value string
		optional         bool // absent where the kernel has no such accounting
	}
	var writes []write
	if c.v2 {
		writes = []write{
			{dir: cc.mem, file: "memory.max", value: mem},
			{dir: cc.mem, file: "memory.swap.max", value: "0", optional: true},
			// An OOM kill takes the whole call, not one process the agent could start again.
			{dir: cc.mem, file: "memory.oom.group", value: "1", optional: true},
			{dir: cc.pids, file: "pids.max", value: procs},
		}
	} else {
		writes = []write{
			{dir: cc.mem, file: "memory.limit_in_bytes", value: mem},
			// memory plus swap: the same bound leaves no swap to spill into.
			{dir: cc.mem, file: "memory.memsw.limit_in_bytes", value: mem, optional: true},
		}
		if cc.pids != "" {
			writes = append(writes, write{dir: cc.pids, file: "pids.max", value: procs})
		}
	}
	for _, w := range writes {
		if err := writeControl(filepath.Join(w.dir, w.file), w.value); err != nil {
			if w.optional && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			_ = cc.remove()
			return nil, fmt.Errorf("set the call's cgroup limit %s: %w", w.file, err)
		}
	}
	return cc, nil
}

// dirs are the call's cgroup folders.
func (cc *callCgroup) dirs() []string {
	if cc == nil {
		return nil
	}
	if cc.v2 || cc.pids == "" {
		return []string{cc.mem}
	}
	return []string{cc.mem, cc.pids}
}

// procsFiles are the files a process writes 0 to to enter the call's cgroup (in every hierarchy).
func (cc *callCgroup) procsFiles() []string {
	var out []string
	for _, d := range cc.dirs() {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// limitHit says which limit the call reached, nil for none: memory when the OOM killer killed
// one of its processes, processes when a fork failed at the limit.
func (cc *callCgroup) limitHit() *LimitHit {
	if cc == nil {
		return nil
	}
	oom := "memory.events"
	if !cc.v2 {
		oom = "memory.oom_control"
	}
	if keyedCount(filepath.Join(cc.mem, oom), "oom_kill") > 0 {
		return &LimitHit{Resource: LimitMemory, Value: cc.memory}
	}
	if cc.pids != "" && keyedCount(filepath.Join(cc.pids, "pids.events"), "max") > 0 {
		return &LimitHit{Resource: LimitProcesses, Value: cc.processes}
	}
	return nil
}

// keyedCount reads the value of key in a flat keyed file ("key value" lines); 0 when absent.
func keyedCount(p, key string) int64 {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// end says which limit the call reached, then removes its cgroup (nil: no cgroup).
func (cc *callCgroup) end() (*LimitHit, error) {
	if cc == nil {
		return nil, nil
	}
	hit := cc.limitHit()
	return hit, cc.remove()
}

// remove kills whatever is left in the call's cgroup and removes it. The error wraps
// ErrAgentAlive when a process of the call would not die.
func (cc *callCgroup) remove() error {
	var errs []error
	for _, d := range cc.dirs() {
		errs = append(errs, removeCgroup(d, cc.v2))
	}
	return errors.Join(errs...)
}

// cgroupDrain bounds how long removal waits for killed processes to leave a cgroup.
const cgroupDrain = 5 * time.Second

// removeCgroup kills every process in dir (cgroup.kill where v2 has it) and removes the folder,
// again while the killed processes drain out (rmdir answers EBUSY until they have).
func removeCgroup(dir string, v2 bool) error {
	deadline := time.Now().Add(cgroupDrain)
	for {
		err := removeCgroupDir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("remove the call's cgroup %s: %w", dir, err)
		}
		left := cgroupProcs(dir)
		if time.Now().After(deadline) {
			if len(left) > 0 {
				return fmt.Errorf("%w: %d process(es) in the call's cgroup %s survived SIGKILL", ErrAgentAlive, len(left), dir)
			}
			return fmt.Errorf("remove the call's cgroup %s: %w", dir, err)
		}
		if v2 && writeControl(filepath.Join(dir, "cgroup.kill"), "1") == nil {
			left = nil
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cgroupProcs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// enterCgroup moves the calling process (all its threads) into the call's cgroups and makes it
// and everything it starts the OOM killer's first choice: whatever limit is reached, the host's
// or the call's, the kernel kills the call, never the studio.
func enterCgroup(procsFiles []string) error {
	if err := writeControl("/proc/self/oom_score_adj", "1000"); err != nil {
		return fmt.Errorf("make the call the OOM killer's first choice: %w", err)
	}
	for _, f := range procsFiles {
		// 0 is the writer itself, whatever its pid in the call's PID namespace.
		if err := writeControl(f, "0"); err != nil {
			return fmt.Errorf("enter the call's cgroup %s: %w", filepath.Dir(f), err)
		}
	}
	return nil
}

// hostMemory is the host's RAM (MemTotal), 0 when unknown.
func hostMemory() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return parseMemTotal(data)
}

func parseMemTotal(meminfo []byte) int64 {
	for _, line := range strings.Split(string(meminfo), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// writeControl writes a control file that must exist: a missing one (no such controller or
// accounting) is fs.ErrNotExist, never created.
func writeControl(p, value string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}

// callLimits are the bounds every call of a jail gets.
type callLimits struct {
	cg                *cgroups // nil where no cgroup can be made: why says
	why               string
	memory, processes int64
}

// newCallLimits detects the host's cgroups once, decides the budget (opts, else the defaults),
// proves a call's cgroup can be made (made and removed at once) and, for a jail that will run
// calls (create), removes what dead runs left.
func newCallLimits(opts Options, create bool) callLimits {
	l := callLimits{memory: opts.Memory, processes: opts.Processes}
	available := hostMemory()
	self, err := os.ReadFile("/proc/self/cgroup")
	var cg *cgroups
	if err == nil {
		cg, err = findCgroups(cgroupRoot, self, available)
	}
	if err == nil {
		available = cg.available
		if create {
			cg.sweepStale()
		}
		var cc *callCgroup
		if cc, err = cg.create(MinMemory, MinProcesses); err == nil {
			err = cc.remove()
		}
	}
	if err != nil {
		l.why = err.Error()
	} else {
		l.cg = cg
	}
	if l.memory <= 0 {
		l.memory = DefaultMemory(available)
	}
	if l.processes <= 0 {
		l.processes = DefaultProcesses
	}
	return l
}

// create makes one call's cgroup; nil (and no error) where the jail has none.
func (l callLimits) create() (*callCgroup, error) {
	if l.cg == nil {
		return nil, nil
	}
	return l.cg.create(l.memory, l.processes)
}

// layer is the cgroup's line in Status.
func (l callLimits) layer() Layer {
	ly := Layer{ID: "cgroup", Name: LayerCgroup, Active: l.cg != nil}
	if l.cg == nil {
		ly.Note = "no cgroup (" + l.why + "): a call's memory and processes are not bounded, its temporary folders hold at most " + FormatBytes(l.memory) + " each"
		return ly
	}
	v := "v1"
	if l.cg.v2 {
		v = "v2"
	}
	ly.Note = fmt.Sprintf("memory %s (no swap; /tmp, /var/tmp and /dev/shm count against it), %d processes (agent-memory, agent-pids); cgroup %s under %s",
		FormatBytes(l.memory), l.processes, v, l.cg.memParent)
	return ly
}
