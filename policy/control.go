package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Controls on child tasks (seed-guidance §4): `/studio steer <text>`, `/studio pause`,
// `/studio continue` and `/studio stop`, commented on a child task's issue, allowed only along the
// profile's control graph and only from writers. Each is answered with the task's new state.
//
// The task statuses are the seven of status.go; a control maps onto them:
//
//   - steer changes no status: the text is added to the task's next pass. A pass already running
//     does not see it (a workflow run cannot be spoken to); the next one does.
//   - pause cancels a running workflow (its evidence stays: the issue, branch, pull request,
//     status comment and run artifact), releases its slot and locks, and sets awaiting-approval
//     with PausedNote in the status history. A ready task may be paused before it starts. Of the
//     seven statuses only awaiting-approval fits: ready would be started again by the next
//     orchestration step, and blocked or cancelled would skip every task that depends on it,
//     whereas an awaiting-approval task holds no refs, keeps its dependents waiting and the
//     orchestration open, and is started by nothing but a person's go-ahead. ChildHoldsCapacity
//     does not count a paused task, as the seed releases a paused job's capacity.
//   - continue sets a paused task ready again; the bot then advances the orchestration, which
//     starts it when its dependencies, a slot and its locks allow. It never answers a plan's
//     approval: a task awaiting approval of its plan (not paused) is refused, so `/studio
//     continue` cannot step around the review the studio mode asks for.
//   - stop cancels a running workflow and sets cancelled (dependents are then skipped, as for any
//     cancelled task). Done work is never cancelled.
//
// A control that would change nothing (pause a paused task, continue a running one, stop a
// cancelled one) is allowed and answered with the state as it is.

// The control actions, as the profile's control graph and the commands name them.
const (
	ControlSteer    = "steer"
	ControlPause    = "pause"
	ControlContinue = "continue"
	ControlStop     = "stop"
)

// ControlActions are the controls the action implements, in the order help lists them.
var ControlActions = []string{ControlSteer, ControlPause, ControlContinue, ControlStop}

// PausedNote is the status history reason of a pause; the bot reads it back (the latest
// awaiting-approval entry) as ControlFacts.ChildPaused.
const PausedNote = "Paused by /studio pause; /studio continue resumes it"

// ControlFacts are what DecideControl decides from.
type ControlFacts struct {
	Action string // one of ControlActions
	// ControllerRole is the role of the child's parent task, the agent that requested it: the
	// person commenting acts for it. "" when the issue is no child task.
	ControllerRole string
	ChildRole      string
	Profile        ProfileFacts
	ActorCanWrite  bool   // the commenter has write access to the repository
	ChildStatus    string // one of TaskStatuses; "" reads as ready
	ChildPaused    bool   // the child is awaiting-approval because of a pause, not a plan review
}

// DecideControl decides a control on a child task: whether it is allowed, the reason or the
// answer for the person who asked, and the child's status after it (its status as it is when
// refused or when nothing changes). The checks, in order: a known action; a writer; a child task
// whose controller is an agent of the profile; the control graph grants the controller the action
// on the child's role; the child's status allows it.
func DecideControl(f ControlFacts) (allowed bool, reason string, newStatus string) {
	status := f.ChildStatus
	if status == "" {
		status = StatusReady
	}
	controller, child := quoteIDs([]string{f.ControllerRole})[0], quoteIDs([]string{f.ChildRole})[0]
	agent, isAgent := f.Profile.Agents[f.ControllerRole]
	granted := agent.Controls[f.ChildRole]
	// A control-only role requests no children, so a child task is never its own: the seed lets it
	// unblock, correct, preserve or conclude work another authorized role admitted. When the
	// parent's edges do not grant the action, a control-only agent's edge over the child's role
	// does, on a child the parent was allowed to admit. A spawning role controls only the children
	// it asked for.
	actingFor := ""
	if isAgent && !slices.Contains(granted, f.Action) && slices.Contains(agent.CanSpawn, f.ChildRole) {
		if other := ControlOnlyControllers(f.Profile, f.ChildRole, f.Action); len(other) > 0 {
			actingFor, granted = other[0], f.Profile.Agents[other[0]].Controls[f.ChildRole]
		}
	}
	allowed, reason, newStatus = decideControl(f, status, controller, child, isAgent, granted)
	if allowed && actingFor != "" {
		reason = fmt.Sprintf("Along %s's control edge over %s (%s admitted this task): %s", quoteIDs([]string{actingFor})[0], child, controller, reason)
	}
	return allowed, reason, newStatus
}

// ControlOnlyControllers are the control-only agents (controls, no can_spawn), sorted, whose
// control edge over role grants action.
func ControlOnlyControllers(p ProfileFacts, role, action string) []string {
	var ids []string
	for id, a := range p.Agents {
		if len(a.CanSpawn) == 0 && slices.Contains(a.Controls[role], action) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func decideControl(f ControlFacts, status, controller, child string, isAgent bool, granted []string) (bool, string, string) {
	switch {
	case !slices.Contains(ControlActions, f.Action):
		return false, fmt.Sprintf("%s is not a control; the controls are %s", quoteIDs([]string{f.Action})[0], strings.Join(ControlActions, ", ")), status
	case !f.ActorCanWrite:
		return false, "only people with write access to the repository may control child tasks", status
	case f.ControllerRole == "":
		return false, "this issue is not a child task of a profile's delegation, so no control graph reaches it", status
	case !isAgent:
		return false, fmt.Sprintf("the parent task's role %s is not an agent of the profile, so it controls nothing", controller), status
	case len(granted) == 0:
		return false, fmt.Sprintf("the profile's control graph gives %s no control over %s", controller, child), status
	case !slices.Contains(granted, f.Action):
		return false, fmt.Sprintf("the profile's control graph does not let %s %s %s; it grants %s", controller, f.Action, child, strings.Join(quoteIDs(granted), ", ")), status
	case !IsTaskStatus(status):
		return false, fmt.Sprintf("the task's status %s is not a task status", quoteIDs([]string{status})[0]), status
	}
	ended := status == StatusBlocked || status == StatusError || status == StatusDone || status == StatusCancelled || status == StatusSkipped
	paused := status == StatusAwaitingApproval && f.ChildPaused
	planReview := status == StatusAwaitingApproval && !f.ChildPaused
	switch f.Action {
	case ControlSteer:
		switch {
		case ended:
			return false, fmt.Sprintf("the task is %s: no pass is coming to steer; `/studio run` on it runs it again", status), status
		case paused:
			return true, "The text is added to the task's next pass, after `/studio continue`; it stays paused (awaiting-approval).", status
		}
		return true, fmt.Sprintf("The text is added to the task's next pass; it stays %s.", status), status
	case ControlPause:
		switch {
		case paused:
			return true, "The task is already paused (awaiting-approval); `/studio continue` resumes it.", status
		case planReview:
			return false, "the task is awaiting approval of its plan and runs nothing; review its plan pull request, or `/studio stop` it", status
		case ended:
			return false, fmt.Sprintf("the task is %s: nothing runs to pause", status), status
		case status == StatusRunning:
			return true, "Paused (awaiting-approval): the running workflow is cancelled, its evidence kept, its slot and write locks released; `/studio continue` resumes it.", StatusAwaitingApproval
		}
		return true, "Paused (awaiting-approval) before it started: nothing starts it until `/studio continue`.", StatusAwaitingApproval
	case ControlContinue:
		switch {
		case paused:
			return true, "Continued (ready): it starts when its dependencies, a concurrency slot and its write locks allow.", StatusReady
		case planReview:
			return false, "the task awaits approval of its plan, which `/studio continue` does not give: approve its plan pull request", status
		case ended:
			return false, fmt.Sprintf("the task is %s, not paused: `/studio continue` resumes a paused task; `/studio run` on it runs it again", status), status
		}
		return true, fmt.Sprintf("The task is not paused; it stays %s.", status), status
	default: // ControlStop
		switch status {
		case StatusDone:
			return false, "the task is done: finished work is not cancelled", status
		case StatusCancelled:
			return true, "The task is already cancelled.", status
		case StatusRunning:
			return true, "Stopped (cancelled): the running workflow is cancelled and its evidence kept; tasks that depend on it are skipped.", StatusCancelled
		}
		return true, "Stopped (cancelled); tasks that depend on it are skipped.", StatusCancelled
	}
}
