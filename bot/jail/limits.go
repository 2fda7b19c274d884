package jail

import (
	"fmt"
	"strconv"
	"strings"
)

// The per-call limits (a cgroup per call on Linux): the agent-memory and agent-pids inputs.
const (
	// DefaultProcesses bounds the processes (threads included) of one call: a fork bomb stops
	// there, and a parallel build on a large runner (a compiler and its threads per core) fits.
	DefaultProcesses = 4096
	// MinMemory is the smallest agent-memory accepted: the Codex CLI alone needs about this.
	MinMemory = 128 << 20
	// MinProcesses is the smallest agent-pids accepted: Codex, a shell and a build tool.
	MinProcesses = 32
	// maxDefaultMemory caps the default budget: a call rarely needs more, and a large runner
	// keeps the rest for the studio and for the page cache.
	maxDefaultMemory = 8 << 30
	// fallbackMemory is the default budget where neither the host's RAM nor a cgroup limit is
	// known.
	fallbackMemory = 2 << 30
)

// Resources a call can run out of (LimitHit.Resource).
const (
	LimitMemory    = "memory"
	LimitProcesses = "processes"
)

// LimitHit says which per-call limit a call reached; the kernel killed it (memory) or refused
// it a process (processes).
type LimitHit struct {
	Resource string `json:"resource"` // LimitMemory or LimitProcesses
	Value    int64  `json:"value"`    // the limit: bytes, or processes
}

// Input names the action input that raises the limit.
func (l LimitHit) Input() string {
	if l.Resource == LimitMemory {
		return "agent-memory"
	}
	return "agent-pids"
}

// Shown is the limit in words ("256 MiB", "100 processes").
func (l LimitHit) Shown() string {
	if l.Resource == LimitMemory {
		return FormatBytes(l.Value)
	}
	return fmt.Sprintf("%d processes", l.Value)
}

// Raised is an input value twice the limit, for the advice to raise it ("512MiB", "200").
func (l LimitHit) Raised() string {
	if l.Resource == LimitMemory {
		return strings.ReplaceAll(FormatBytes(2*l.Value), " ", "")
	}
	return strconv.FormatInt(2*l.Value, 10)
}

var byteUnits = []struct {
	names []string
	shift uint
}{
	{[]string{"tib", "tb", "t"}, 40},
	{[]string{"gib", "gb", "g"}, 30},
	{[]string{"mib", "mb", "m"}, 20},
	{[]string{"kib", "kb", "k"}, 10},
	{[]string{"b", ""}, 0},
}

// ParseMemory reads the agent-memory input: a size such as 4GiB, 512MiB or 1.5G (binary units:
// GB and G mean GiB, as in docker and Kubernetes' Gi); empty means the default (0).
func ParseMemory(v string) (int64, error) {
	s := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), " ", ""))
	if s == "" {
		return 0, nil
	}
	bad := fmt.Errorf("agent-memory %q must be a size such as 4GiB or 512MiB", v)
	for _, u := range byteUnits {
		for _, name := range u.names {
			num, ok := strings.CutSuffix(s, name)
			if !ok || num == "" || strings.IndexFunc(num, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }) >= 0 {
				continue
			}
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || f <= 0 || f*float64(int64(1)<<u.shift) >= float64(int64(1)<<62) {
				return 0, bad
			}
			n := int64(f * float64(int64(1)<<u.shift))
			if n < MinMemory {
				return 0, fmt.Errorf("agent-memory %q is below %s, too little for the Codex CLI", v, FormatBytes(MinMemory))
			}
			return n, nil
		}
	}
	return 0, bad
}

// ParseProcesses reads the agent-pids input: a number of processes (threads count); empty means
// the default (0).
func ParseProcesses(v string) (int64, error) {
	s := strings.TrimSpace(v)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < MinProcesses || n > 1<<22 {
		return 0, fmt.Errorf("agent-pids %q must be a number of processes from %d to %d", v, MinProcesses, 1<<22)
	}
	return n, nil
}

// DefaultMemory is the budget of a call when agent-memory is not set: three quarters of what the
// studio may use (its cgroup's limit or the host's RAM, available), leaving the rest to the
// studio, and at most 8 GiB.
func DefaultMemory(available int64) int64 {
	if available <= 0 {
		return fallbackMemory
	}
	return min(available/4*3, maxDefaultMemory)
}

// FormatBytes shows a size in binary units, one decimal where it is not whole ("1.5 GiB").
func FormatBytes(n int64) string {
	for _, u := range byteUnits[:4] {
		if n >= int64(1)<<u.shift {
			v := float64(n) / float64(int64(1)<<u.shift)
			unit := strings.ToUpper(u.names[0][:1]) + u.names[0][1:2] + "B"
			if v == float64(int64(v)) {
				return fmt.Sprintf("%d %s", int64(v), unit)
			}
			return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
		}
	}
	return fmt.Sprintf("%d B", n)
}
