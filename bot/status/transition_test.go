package status

import (
	"context"
	"slices"
	"testing"
)

// fakeLabels is an issue's labels as GitHub keeps them.
type fakeLabels struct{ labels []string }

func (f *fakeLabels) AddLabels(_ context.Context, _ int, labels ...string) ([]string, error) {
	for _, l := range labels {
		if !slices.Contains(f.labels, l) {
			f.labels = append(f.labels, l)
		}
	}
	return slices.Clone(f.labels), nil
}

func (f *fakeLabels) RemoveLabel(_ context.Context, _ int, label string) error {
	f.labels = slices.DeleteFunc(f.labels, func(l string) bool { return l == label })
	return nil
}

// A transition ends with exactly one status label, also removing one another run set after the
// event's list of labels was read.
func TestTransitionLeavesOneStatusLabel(t *testing.T) {
	t.Parallel()
	gh := &fakeLabels{labels: []string{"role/gameplay-programmer", "studio:status/running", "studio:status/blocked"}}
	known := []string{"role/gameplay-programmer", "studio:status/running"} // the event's, older
	kept, from, changed, err := Labels{GitHub: gh, Prefix: "studio:"}.Transition(context.Background(), 7, known, "done")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"role/gameplay-programmer", "studio:status/done"}; !slices.Equal(gh.labels, want) || !slices.Equal(kept, want) {
		t.Errorf("labels %q, kept %q; want %q", gh.labels, kept, want)
	}
	if from != "running, blocked" || !changed {
		t.Errorf("from %q changed %v, want both earlier statuses and a change", from, changed)
	}
	if _, _, changed, _ := (Labels{GitHub: gh, Prefix: "studio:"}).Transition(context.Background(), 7, gh.labels, "done"); changed {
		t.Error("the same status again counts as a change")
	}
}
