package serve

import (
	"context"
	"errors"
	"testing"
)

func TestModeWaitsForItsSlotAndNamesOnlyAWellFormedDelivery(t *testing.T) {
	t.Parallel()
	var nilMode *Mode
	if nilMode.DeliveryID() != "" {
		t.Error("no serve mode names a delivery")
	}
	m := &Mode{Delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958"}
	if m.DeliveryID() != m.Delivery {
		t.Errorf("delivery = %q", m.DeliveryID())
	}
	if (&Mode{Delivery: "x --> <!-- y"}).DeliveryID() != "" {
		t.Error("a malformed delivery id would be recorded")
	}
	release, err := m.Wait(context.Background())
	if err != nil || release == nil {
		t.Fatalf("no slot bound: %v", err)
	}
	release()
	held := 0
	m.Slot = func(context.Context) (func(), error) { held++; return func() { held-- }, nil }
	release, _ = m.Wait(context.Background())
	if held != 1 {
		t.Errorf("slots held = %d", held)
	}
	release()
	m.Slot = func(context.Context) (func(), error) { return nil, errors.New("shutting down") }
	if release, err := m.Wait(context.Background()); err == nil || release == nil {
		t.Errorf("a refused slot: %v, release nil %v", err, release == nil)
	}
}
