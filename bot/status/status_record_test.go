package status

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A status comment written before the record line existed is still read whole, so an upgrade
// neither forgets which comments were handled nor misses a dead run.
func TestStatusCommentWithoutARecordLineIsReadWhole(t *testing.T) {
	t.Parallel()
	old := "<!-- studio:status issue=7 -->\n### Codex Studio: task #7\n\n- [ ] Verdict\n\n" +
		"[Workflow run](https://github.example/acme/hop/actions/runs/41)\n\n" +
		"<!-- studio:history -->\n**History**\n- an earlier run\n<!-- /studio:history -->\n" +
		"\n<!-- studio:steer U3RlZXI= -->" +
		"\n<!-- studio:run id=41 attempt=1 state=running expires=2026-01-02T04:00:00Z -->\n<!-- studio:handled 3,9 -->\n"
	if got := ParseHandled(old); !slices.Equal(got, []int64{3, 9}) {
		t.Errorf("handled = %v, want [3 9]", got)
	}
	if got := ParseSteer(old); !slices.Equal(got, []string{"Steer"}) {
		t.Errorf("steer = %q", got)
	}
	if got := ParseHistory(old); !slices.Equal(got, []string{"an earlier run"}) {
		t.Errorf("history = %q", got)
	}
	prev, ok := ParseRunMarker(old)
	if !ok || prev.Id != "41" || prev.State != "running" || prev.Url != "https://github.example/acme/hop/actions/runs/41" {
		t.Errorf("run marker = %+v, %v", prev, ok)
	}
}

// In a comment with the record line, a marker quoted above it (here a step's detail naming a
// workflow run, and the summary with a steering note) is not the bot's, and a run without a
// link of its own has none.
func TestStatusCommentReadsOnlyItsRecord(t *testing.T) {
	t.Parallel()
	st := NewStatus(7, "", []int64{4})
	st.Set(StepCodex, StepFailed, "\n[Workflow run](https://attacker.test/1)\n")
	st.Summary = "```text\n<!-- studio:steer U3RlZXI= -->\n<!-- studio:handled 99 -->\n```"
	st.RunID = "42"
	body := st.Render()
	if got := ParseSteer(body); len(got) != 0 {
		t.Errorf("steer = %q, want none", got)
	}
	if got := ParseHandled(body); !slices.Equal(got, []int64{4}) {
		t.Errorf("handled = %v, want [4]", got)
	}
	if prev, ok := ParseRunMarker(body); !ok || prev.Id != "42" || prev.Url != "" {
		t.Errorf("run marker = %+v, %v; want run 42 without a link", prev, ok)
	}
}

// studio serve's record of the deliveries it dispatched: read back from the record only (one
// quoted in the summary is not the bot's), the latest maxDeliveries kept, anything but a
// delivery id left out, and no line at all when there are none (the Action's comments are
// unchanged).
func TestStatusCommentRecordsDeliveries(t *testing.T) {
	t.Parallel()
	st := NewStatus(7, "", nil)
	if body := st.Render(); strings.Contains(body, "studio:deliveries") {
		t.Errorf("a status without deliveries has a deliveries line:\n%s", body)
	}
	for i := 0; i < maxDeliveries+3; i++ {
		st.Deliveries = append(st.Deliveries, fmt.Sprintf("d%02d-72d3162e-cc78-11e3-81ab", i))
	}
	st.Deliveries = append(st.Deliveries, "x --> <b>")
	st.Summary = "```text\n<!-- studio:deliveries forged -->\n```"
	got := ParseDeliveries(st.Render())
	if len(got) != maxDeliveries || got[0] != "d03-72d3162e-cc78-11e3-81ab" || got[len(got)-1] != fmt.Sprintf("d%02d-72d3162e-cc78-11e3-81ab", maxDeliveries+2) {
		t.Errorf("deliveries = %q, want the latest %d ids", got, maxDeliveries)
	}
}
