package policy

import (
	"strings"
	"testing"
)

func TestDecideControl(t *testing.T) {
	// In studioProfile the lead may steer, pause, continue and stop its builders; the producer
	// may only steer and stop them, and controls nothing over the critic.
	type want struct {
		allowed bool
		reason  string // a part of the reason
		status  string
	}
	tests := []struct {
		name  string
		facts ControlFacts
		want  want
	}{
		{"unknown action", ControlFacts{Action: "interrupt"}, want{false, "`interrupt` is not a control; the controls are steer, pause, continue, stop", StatusRunning}},
		{"not a writer", ControlFacts{ActorCanWrite: false}, want{false, "only people with write access", StatusRunning}},
		{"not a child task", ControlFacts{ControllerRole: "-"}, want{false, "not a child task", StatusRunning}},
		{"controller outside the profile", ControlFacts{ControllerRole: "art-director"}, want{false, "the parent task's role `art-director` is not an agent of the profile", StatusRunning}},
		{"no control over the role", ControlFacts{ControllerRole: "producer", ChildRole: "qa-playtester"}, want{false, "gives `producer` no control over `qa-playtester`", StatusRunning}},
		{"action not granted", ControlFacts{ControllerRole: "producer", Action: ControlPause}, want{false, "does not let `producer` pause `gameplay-programmer`; it grants `steer`, `stop`", StatusRunning}},
		{"granted to the root", ControlFacts{ControllerRole: "producer", Action: ControlStop}, want{true, "Stopped (cancelled)", StatusCancelled}},
		{"a bad status", ControlFacts{ChildStatus: "paused"}, want{false, "`paused` is not a task status", "paused"}},

		{"steer running", ControlFacts{Action: ControlSteer}, want{true, "added to the task's next pass; it stays running", StatusRunning}},
		{"steer ready (no label yet)", ControlFacts{Action: ControlSteer, ChildStatus: "-"}, want{true, "it stays ready", StatusReady}},
		{"steer a plan awaiting approval", ControlFacts{Action: ControlSteer, ChildStatus: StatusAwaitingApproval}, want{true, "it stays awaiting-approval", StatusAwaitingApproval}},
		{"steer paused", ControlFacts{Action: ControlSteer, ChildStatus: StatusAwaitingApproval, ChildPaused: true}, want{true, "after `/studio continue`; it stays paused", StatusAwaitingApproval}},
		{"steer done", ControlFacts{Action: ControlSteer, ChildStatus: StatusDone}, want{false, "the task is done: no pass is coming to steer", StatusDone}},
		{"steer blocked", ControlFacts{Action: ControlSteer, ChildStatus: StatusBlocked}, want{false, "`/studio run` on it runs it again", StatusBlocked}},

		{"pause running", ControlFacts{Action: ControlPause}, want{true, "the running workflow is cancelled, its evidence kept, its slot and write locks released", StatusAwaitingApproval}},
		{"pause ready", ControlFacts{Action: ControlPause, ChildStatus: StatusReady}, want{true, "before it started", StatusAwaitingApproval}},
		{"pause paused", ControlFacts{Action: ControlPause, ChildStatus: StatusAwaitingApproval, ChildPaused: true}, want{true, "already paused", StatusAwaitingApproval}},
		{"pause a plan awaiting approval", ControlFacts{Action: ControlPause, ChildStatus: StatusAwaitingApproval}, want{false, "awaiting approval of its plan", StatusAwaitingApproval}},
		{"pause cancelled", ControlFacts{Action: ControlPause, ChildStatus: StatusCancelled}, want{false, "nothing runs to pause", StatusCancelled}},
		{"pause skipped", ControlFacts{Action: ControlPause, ChildStatus: StatusSkipped}, want{false, "nothing runs to pause", StatusSkipped}},

		{"continue paused", ControlFacts{Action: ControlContinue, ChildStatus: StatusAwaitingApproval, ChildPaused: true}, want{true, "Continued (ready)", StatusReady}},
		{"continue never answers a plan review", ControlFacts{Action: ControlContinue, ChildStatus: StatusAwaitingApproval}, want{false, "approve its plan pull request", StatusAwaitingApproval}},
		{"continue running", ControlFacts{Action: ControlContinue}, want{true, "not paused; it stays running", StatusRunning}},
		{"continue ready", ControlFacts{Action: ControlContinue, ChildStatus: StatusReady}, want{true, "it stays ready", StatusReady}},
		{"continue blocked", ControlFacts{Action: ControlContinue, ChildStatus: StatusBlocked}, want{false, "the task is blocked, not paused", StatusBlocked}},
		{"continue done", ControlFacts{Action: ControlContinue, ChildStatus: StatusDone}, want{false, "not paused", StatusDone}},

		{"stop running", ControlFacts{Action: ControlStop}, want{true, "the running workflow is cancelled and its evidence kept", StatusCancelled}},
		{"stop ready", ControlFacts{Action: ControlStop, ChildStatus: StatusReady}, want{true, "Stopped (cancelled)", StatusCancelled}},
		{"stop paused", ControlFacts{Action: ControlStop, ChildStatus: StatusAwaitingApproval, ChildPaused: true}, want{true, "Stopped (cancelled)", StatusCancelled}},
		{"stop a plan awaiting approval", ControlFacts{Action: ControlStop, ChildStatus: StatusAwaitingApproval}, want{true, "Stopped (cancelled)", StatusCancelled}},
		{"stop blocked", ControlFacts{Action: ControlStop, ChildStatus: StatusBlocked}, want{true, "Stopped (cancelled)", StatusCancelled}},
		{"stop skipped", ControlFacts{Action: ControlStop, ChildStatus: StatusSkipped}, want{true, "Stopped (cancelled)", StatusCancelled}},
		{"stop cancelled", ControlFacts{Action: ControlStop, ChildStatus: StatusCancelled}, want{true, "already cancelled", StatusCancelled}},
		{"stop done", ControlFacts{Action: ControlStop, ChildStatus: StatusDone}, want{false, "finished work is not cancelled", StatusDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Defaults: the lead, by a writer, on a running builder; "-" empties a field.
			f := tt.facts
			f.Profile = studioProfile()
			if f.Action == "" {
				f.Action = ControlSteer
			}
			if tt.name != "not a writer" {
				f.ActorCanWrite = true
			}
			switch f.ControllerRole {
			case "":
				f.ControllerRole = "lead-programmer"
			case "-":
				f.ControllerRole = ""
			}
			if f.ChildRole == "" {
				f.ChildRole = "gameplay-programmer"
			}
			switch f.ChildStatus {
			case "":
				f.ChildStatus = StatusRunning
			case "-":
				f.ChildStatus = ""
			}
			allowed, reason, status := DecideControl(f)
			if allowed != tt.want.allowed || status != tt.want.status || !strings.Contains(reason, tt.want.reason) {
				t.Errorf("DecideControl = %v, %q, %q; want %v, a reason containing %q, %q", allowed, reason, status, tt.want.allowed, tt.want.reason, tt.want.status)
			}
			// Every status a control sets is a move the one transition function accepts.
			if allowed {
				if err := CheckTransition(f.ChildStatus, status); err != nil {
					t.Errorf("the control's move is not a legal transition: %v", err)
				}
			}
		})
	}
}

// TestControlsCoverEveryStatus decides every control on every status, paused or not, so no
// combination falls through to an answer that changes a status illegally.
func TestControlsCoverEveryStatus(t *testing.T) {
	for _, action := range ControlActions {
		for _, status := range TaskStatuses {
			for _, paused := range []bool{false, true} {
				if paused && status != StatusAwaitingApproval {
					continue
				}
				f := ControlFacts{Action: action, ControllerRole: "lead-programmer", ChildRole: "gameplay-programmer", Profile: studioProfile(), ActorCanWrite: true, ChildStatus: status, ChildPaused: paused}
				allowed, reason, next := DecideControl(f)
				if reason == "" {
					t.Errorf("%s on %s (paused %v): no reason", action, status, paused)
				}
				if !allowed && next != status {
					t.Errorf("%s on %s: refused but the status changes to %s", action, status, next)
				}
				if err := CheckTransition(status, next); err != nil {
					t.Errorf("%s on %s (paused %v): %v", action, status, paused, err)
				}
				if action == ControlSteer && next != status {
					t.Errorf("steer changed %s to %s", status, next)
				}
			}
		}
	}
}

// A control-only role (controls, no can_spawn) requests no children, so no child task is ever its
// own; the seed lets it unblock, correct, preserve or conclude work another authorized role
// admitted (issue 35, item 4). A spawning role's edges still reach only its own children, and a
// control-only role's edges only children the parent was allowed to admit.
func TestAControlOnlyRoleControlsWorkAnotherRoleAdmitted(t *testing.T) {
	p := studioProfile()
	p.Agents["qa-playtester"] = AgentFacts{Controls: map[string][]string{"gameplay-programmer": {"pause", "continue"}}}
	decide := func(controller, child, action string) (bool, string) {
		ok, reason, _ := DecideControl(ControlFacts{Action: action, ControllerRole: controller, ChildRole: child, Profile: p, ActorCanWrite: true, ChildStatus: StatusRunning})
		return ok, reason
	}
	if ok, reason := decide("producer", "gameplay-programmer", ControlPause); !ok || !strings.HasPrefix(reason, "Along `qa-playtester`'s control edge over `gameplay-programmer` (`producer` admitted this task): Paused") {
		t.Errorf("the control-only role's pause of the producer's child: %v %q", ok, reason)
	}
	if ok, reason := decide("producer", "gameplay-programmer", ControlSteer); !ok || strings.Contains(reason, "qa-playtester") {
		t.Errorf("the parent's own edge is used first: %v %q", ok, reason)
	}
	// lead-programmer spawns, so its pause edge over gameplay-programmer reaches its own children only.
	p.Agents["qa-playtester"] = AgentFacts{Controls: map[string][]string{"gameplay-programmer": {"continue"}}}
	if ok, reason := decide("producer", "gameplay-programmer", ControlPause); ok || !strings.Contains(reason, "does not let `producer` pause") {
		t.Errorf("a spawning role's edge reached another's child: %v %q", ok, reason)
	}
	// The parent may not admit the child's role: nobody authorized admitted it.
	p.Agents["qa-playtester"] = AgentFacts{Controls: map[string][]string{"custom-scout": {"stop"}}}
	if ok, reason := decide("lead-programmer", "custom-scout", ControlStop); ok {
		t.Errorf("a child the parent could not admit was controlled: %q", reason)
	}
	if got := ControlOnlyControllers(p, "custom-scout", ControlStop); len(got) != 1 || got[0] != "qa-playtester" {
		t.Errorf("ControlOnlyControllers = %v", got)
	}
}
