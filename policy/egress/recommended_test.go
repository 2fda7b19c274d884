package egress

import (
	"strings"
	"testing"
)

func TestRecommendedFollowsTheRepositorysFiles(t *testing.T) {
	l, used := Recommended([]string{"README.md", "go.mod", "Game.csproj"})
	if strings.Join(used, ",") != "Go modules,NuGet" {
		t.Fatalf("ecosystems = %q", used)
	}
	var want []string
	for _, e := range Ecosystems() {
		if e.Name == "Go modules" || e.Name == "NuGet" {
			want = append(want, e.Hosts...)
		}
	}
	if got := strings.Join(l.Entries(), ","); got != strings.Join(want, ",") || len(want) == 0 {
		t.Errorf("hosts = %s; want %s", got, strings.Join(want, ","))
	}
	if l, used := Recommended([]string{"project.godot", "README.md"}); l.Len() != 0 || len(used) != 0 {
		t.Errorf("a repository of no ecosystem got %v %v", l.Entries(), used)
	}
	for _, e := range Ecosystems() {
		if len(e.Markers) == 0 || len(e.Hosts) == 0 {
			t.Errorf("ecosystem %q has no markers or no hosts", e.Name)
		}
	}
}

func TestEffectiveCountsTheTasksHostsOnlyWhenAccepted(t *testing.T) {
	rec, _ := ParseList([]string{"a.example"})
	repo, _ := ParseList([]string{"b.example"})
	in, _ := ParseList([]string{"c.example", "a.example"})
	task, _ := ParseList([]string{"d.example"})
	l, notes := Effective(Sources{Recommended: rec, Repository: repo, Input: in, Task: task})
	if got := strings.Join(l.Entries(), ","); got != "a.example,b.example,c.example" {
		t.Errorf("not accepted: %s", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "d.example") || !strings.Contains(notes[0], "approved") {
		t.Errorf("notes = %q", notes)
	}
	l, notes = Effective(Sources{Recommended: rec, Task: task, TaskAccepted: true})
	if got := strings.Join(l.Entries(), ","); got != "a.example,d.example" || len(notes) != 0 {
		t.Errorf("accepted: %s %q", got, notes)
	}
	for _, c := range []struct{ strict, approved, plan, want bool }{
		{false, false, false, true},
		{false, false, true, false},
		{true, false, false, false},
		{true, true, false, true},
		{true, true, true, false},
	} {
		if got := TaskHostsCount(c.strict, c.approved, c.plan); got != c.want {
			t.Errorf("TaskHostsCount(%v, %v, %v) = %v", c.strict, c.approved, c.plan, got)
		}
	}
}
