package actiontest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeGo writes a `go` command that answers each `go test -fuzz` call with the next of replies
// (output, then exit code) for the target named in it, and logs every call's arguments.
func fakeGo(t *testing.T, replies map[string][]fuzzReply) (bin, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	var script strings.Builder
	script.WriteString("#!/bin/sh\necho \"$*\" >>" + calls + "\n")
	script.WriteString("target=$(echo \"$*\" | sed -n 's/.*-fuzz ^\\([A-Za-z]*\\)\\$.*/\\1/p')\n")
	script.WriteString("n=$(grep -c \"$target\" " + calls + ")\n")
	for target, rs := range replies {
		for i, r := range rs {
			script.WriteString("if [ \"$target\" = " + target + " ] && [ \"$n\" = " + strconv.Itoa(i+1) + " ]; then\n")
			script.WriteString("cat <<'OUT'\n" + r.output + "\nOUT\nexit " + strconv.Itoa(r.exit) + "\nfi\n")
		}
	}
	script.WriteString("echo ok\nexit 0\n")
	bin = filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

type fuzzReply struct {
	output string
	exit   int
}

// The race Go 1.26's fuzzing coordinator loses at the end of a -fuzztime window (golang/go#75804)
// prints this and exits 1 with no failing input.
const deadlineRace = `fuzz: elapsed: 3s, execs: 33756 (0/sec), new interesting: 74 (total: 83)
--- FAIL: FuzzParseTask (3.03s)
    context deadline exceeded
FAIL
exit status 1`

const realFinding = `--- FAIL: FuzzParseTask (0.41s)
    --- FAIL: FuzzParseTask (0.00s)
        task_fuzz_test.go:31: write path "../x" escaped the repository

    Failing input written to testdata/fuzz/FuzzParseTask/5c1b2a
    To re-run:
    go test -run=FuzzParseTask/5c1b2a
FAIL
exit status 1`

func TestFuzzScriptSurvivesTheDeadlineRaceButNotAFinding(t *testing.T) {
	cases := []struct {
		name     string
		fuzztime string
		replies  []fuzzReply
		wantOK   bool
		// wantCalls is how often FuzzParseTask ran.
		wantCalls int
	}{
		{name: "the deadline race once is run again", fuzztime: "10s", replies: []fuzzReply{{deadlineRace, 1}}, wantOK: true, wantCalls: 2},
		{name: "the deadline race twice fails", fuzztime: "10s", replies: []fuzzReply{{deadlineRace, 1}, {deadlineRace, 1}}, wantOK: false, wantCalls: 2},
		{name: "a failing input fails at once", fuzztime: "10s", replies: []fuzzReply{{realFinding, 1}}, wantOK: false, wantCalls: 1},
		{name: "a build failure fails at once", fuzztime: "10s", replies: []fuzzReply{{"policy/task.go:3:1: syntax error", 1}}, wantOK: false, wantCalls: 1},
		{name: "a clean run runs once", fuzztime: "", replies: nil, wantOK: true, wantCalls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bin, calls := fakeGo(t, map[string][]fuzzReply{"FuzzParseTask": tc.replies})
			cmd := exec.Command(filepath.Join(absRoot(t), "scripts", "fuzz"))
			cmd.Env = append(baseEnv(), "PATH="+bin+":/usr/bin:/bin")
			if tc.fuzztime != "" {
				cmd.Env = append(cmd.Env, "FUZZTIME="+tc.fuzztime)
			}
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.wantOK {
				t.Fatalf("scripts/fuzz: err=%v, want ok=%v\n%s", err, tc.wantOK, out)
			}
			data, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(data), "FuzzParseTask"); got != tc.wantCalls {
				t.Errorf("FuzzParseTask ran %d times, want %d\n%s", got, tc.wantCalls, data)
			}
		})
	}
}

// The default budget is a count of inputs, which has no deadline for the coordinator to race.
func TestFuzzScriptDefaultsToACount(t *testing.T) {
	bin, calls := fakeGo(t, nil)
	cmd := exec.Command(filepath.Join(absRoot(t), "scripts", "fuzz"))
	cmd.Env = append(baseEnv(), "PATH="+bin+":/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/fuzz: %v\n%s", err, out)
	}
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	targets := fuzzTargets(t)
	if len(lines) != len(targets) {
		t.Fatalf("want one call for each of the %d targets, got %d calls:\n%s", len(targets), len(lines), data)
	}
	for i, target := range targets {
		pkg, name, _ := strings.Cut(target, " ")
		if !strings.Contains(lines[i], "test "+pkg+" ") || !strings.Contains(lines[i], "-fuzz ^"+name+"$") {
			t.Errorf("call %d %q is not for %s", i, lines[i], target)
		}
	}
	for _, l := range lines {
		f := strings.Fields(l)
		for i, a := range f {
			if a == "-fuzztime" && (i+1 >= len(f) || !strings.HasSuffix(f[i+1], "x")) {
				t.Errorf("call %q: -fuzztime is not a count", l)
			}
		}
		if !strings.Contains(l, "-fuzztime") {
			t.Errorf("call %q has no -fuzztime", l)
		}
	}
}

// TestFuzzScriptListsEveryTarget: a fuzz target the script does not list would only ever run its
// committed corpus, never search.
func TestFuzzScriptListsEveryTarget(t *testing.T) {
	root := absRoot(t)
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			found = append(found, "./"+filepath.ToSlash(rel)+"/ "+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	listed := fuzzTargets(t)
	slices.Sort(found)
	sorted := slices.Sorted(slices.Values(listed))
	if !slices.Equal(found, sorted) {
		t.Errorf("scripts/fuzz lists\n%s\nbut the fuzz targets are\n%s", strings.Join(sorted, "\n"), strings.Join(found, "\n"))
	}
}

// fuzzTargets are scripts/fuzz's targets list, in order, each "<package> <FuzzTarget>".
func fuzzTargets(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(absRoot(t), "scripts", "fuzz"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(data), "\ntargets=(\n")
	list, _, ok2 := strings.Cut(list, "\n)\n")
	if !ok || !ok2 {
		t.Fatal("scripts/fuzz has no targets=( ... ) list")
	}
	var targets []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(strings.Trim(strings.TrimSpace(line), `"`))
		if len(f) != 2 || !strings.HasPrefix(f[1], "Fuzz") {
			t.Fatalf("scripts/fuzz target line %q is not \"<package> <FuzzTarget>\"", line)
		}
		targets = append(targets, f[0]+" "+f[1])
	}
	return targets
}
