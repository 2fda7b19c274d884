package live

import (
	"context"
	"sync"
	"time"
)

// Controls answers, for the window's goroutine, which controls (steer, stop, pause) reach the
// run's task: every one on a task that is no delegated child (Child reports false); on a child,
// those Allowed admits (its profile's control graph). Each answer is asked once and kept: the
// graph does not change during a run. An answer that cannot be had refuses.
func Controls(child func(ctx context.Context) (bool, error), allowed func(ctx context.Context, action string) (bool, error)) func(action string) bool {
	var mu sync.Mutex
	var isChild *bool
	decided := map[string]bool{}
	return func(action string) bool {
		mu.Lock()
		defer mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if isChild == nil {
			c, err := child(ctx)
			if err != nil {
				return false
			}
			isChild = &c
		}
		if !*isChild {
			return true
		}
		if ok, seen := decided[action]; seen {
			return ok
		}
		ok, err := allowed(ctx, action)
		decided[action] = err == nil && ok
		return decided[action]
	}
}
