package jail

import (
	"strings"
	"testing"
)

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "4GiB": 4 << 30, "512MiB": 512 << 20, "512 MiB": 512 << 20, "1.5G": 3 << 29, "4gb": 4 << 30,
		"2048M": 2 << 30, "262144k": 256 << 20, "1TiB": 1 << 40, "268435456": 256 << 20,
	} {
		got, err := ParseMemory(in)
		if err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "4GiBs", "-1GiB", "0", "1e9", "GiB", "64MiB", "1.2.3G", "9000000TiB"} {
		if got, err := ParseMemory(in); err == nil || !strings.Contains(err.Error(), "agent-memory") {
			t.Errorf("ParseMemory(%q) = %d, %v; want an error naming agent-memory", in, got, err)
		}
	}
}

func TestParseProcesses(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "4096": 4096, " 100 ": 100} {
		if got, err := ParseProcesses(in); err != nil || got != want {
			t.Errorf("ParseProcesses(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"many", "-5", "0", "10", "1.5", "99999999"} {
		if _, err := ParseProcesses(in); err == nil || !strings.Contains(err.Error(), "agent-pids") {
			t.Errorf("ParseProcesses(%q) = %v; want an error naming agent-pids", in, err)
		}
	}
}

func TestDefaultMemoryLeavesRoomForTheStudio(t *testing.T) {
	for avail, want := range map[int64]int64{0: 2 << 30, 3 << 29: 9 << 27, 4 << 30: 3 << 30, 64 << 30: 8 << 30} {
		if got := DefaultMemory(avail); got != want {
			t.Errorf("DefaultMemory(%s) = %s, want %s", FormatBytes(avail), FormatBytes(got), FormatBytes(want))
		}
	}
}

func TestLimitHitWords(t *testing.T) {
	mem := LimitHit{Resource: LimitMemory, Value: 256 << 20}
	if mem.Shown() != "256 MiB" || mem.Raised() != "512MiB" || mem.Input() != "agent-memory" {
		t.Errorf("memory limit in words: %q %q %q", mem.Shown(), mem.Raised(), mem.Input())
	}
	if got := FormatBytes(3 << 29); got != "1.5 GiB" {
		t.Errorf("FormatBytes(1.5 GiB) = %q", got)
	}
	pids := LimitHit{Resource: LimitProcesses, Value: 100}
	if pids.Shown() != "100 processes" || pids.Raised() != "200" || pids.Input() != "agent-pids" {
		t.Errorf("process limit in words: %q %q %q", pids.Shown(), pids.Raised(), pids.Input())
	}
}
