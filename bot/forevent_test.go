package bot

import (
	"context"
	"testing"
)

// One configured bot serves each event through a value of its own: the event's memo is new
// (nothing one event read answers for another), seeded from the payload, and Handle leaves the
// configured bot as it was built.
func TestEachEventGetsItsOwnMemo(t *testing.T) {
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
	if b.gh != nil || b.lock != nil || b.onBase || b.pristine || b.published != nil || b.loadedRoles != nil {
		t.Errorf("Handle changed the configured bot: memo %v, lock %v, onBase %v, pristine %v, published %v, roles %v",
			b.gh, b.lock, b.onBase, b.pristine, b.published, b.loadedRoles)
	}
}
