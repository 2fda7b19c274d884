package bot

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// One configured bot serves each event through a value of its own: the event's memo is new
// (nothing one event read answers for another), seeded from the payload, and Handle leaves the
// configured bot as it was built.
func TestEachEventGetsItsOwnMemo(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	ctx := context.Background()
	n := w.issue("Snappier jump", hTask)
	tr := w.comment(n, hReader, "/studio run")
	b := w.bot()

	first, second := b.forEvent(tr), b.forEvent(tr)
	if first.gh == second.gh {
		t.Fatal("two events share a memo")
	}
	if got := w.requests(func() { _, _ = first.gh.Issue(ctx, n) }); got != 0 {
		t.Errorf("the payload's issue cost %d requests, want it seeded", got)
	}
	if got := w.requests(func() { _, _ = first.gh.Comments(ctx, n) }); got != 1 {
		t.Errorf("the first event's comments cost %d requests, want 1", got)
	}
	if got := w.requests(func() { _, _ = second.gh.Comments(ctx, n) }); got != 1 {
		t.Errorf("the second event's comments cost %d requests: answered from the first event's memo", got)
	}

	out, err := b.Handle(ctx, tr)
	if err != nil || out.Status != "refused" {
		t.Fatalf("Handle = %+v, %v; want the reader refused", out, err)
	}
	// The configured bot holds nothing an event could change: everything about one event is in
	// its eventBot. A field added to Bot beside Deps and Settings must be configuration, never
	// per-event state; this test makes the addition a conscious one.
	bt := reflect.TypeOf(*b)
	var fields []string
	for i := range bt.NumField() {
		fields = append(fields, bt.Field(i).Name)
	}
	if got := strings.Join(fields, ","); got != "Deps,Settings" {
		t.Errorf("Bot's fields are %s, want Deps,Settings (per-event state belongs in eventBot)", got)
	}
}
