package live

import (
	"context"
	"errors"
	"testing"
)

func TestControlsAskTheGraphOnlyForAChildAndOnce(t *testing.T) {
	t.Parallel()
	asked := map[string]int{}
	graph := func(_ context.Context, action string) (bool, error) {
		asked[action]++
		return action == "steer", nil
	}
	top := Controls(func(context.Context) (bool, error) { return false, nil }, graph)
	if !top("stop") || !top("pause") || len(asked) != 0 {
		t.Errorf("a task that is no child: stop %v, pause %v, graph asked %v", top("stop"), top("pause"), asked)
	}
	child := Controls(func(context.Context) (bool, error) { return true, nil }, graph)
	if !child("steer") || child("stop") || child("stop") || asked["stop"] != 1 {
		t.Errorf("a child: steer %v, stop %v, graph asked %v (want once per action)", child("steer"), child("stop"), asked)
	}
	unknown := Controls(func(context.Context) (bool, error) { return false, errors.New("GitHub is down") }, graph)
	if unknown("stop") {
		t.Error("a task whose parent cannot be read took a stop")
	}
}
