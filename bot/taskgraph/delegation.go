package taskgraph

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

// ProfileFacts turns a compiled profile into policy's facts.
func ProfileFacts(p *guidance.Profile) (policy.ProfileFacts, error) {
	f := policy.ProfileFacts{Root: p.Root, Orchestration: p.Coordination.Orchestration, Agents: map[string]policy.AgentFacts{},
		ContradictionPolicy: p.Coordination.ContradictionPolicy}
	for id, a := range p.Agents {
		f.Agents[id] = policy.AgentFacts{CanSpawn: a.CanSpawn, Controls: a.Controls, Trust: a.Trust, Verification: a.Verification, Backends: a.Backends}
	}
	if f.Orchestration == policy.OrchestrationNative {
		return f, nil // no durable limits: DecideDelegation refuses every request before any limit
	}
	var err error
	if f.MaxDepth, err = policy.ParseProfileLimit("max_depth", p.Coordination.MaxDepth); err != nil {
		return f, err
	}
	if f.MaxActiveAgents, err = policy.ParseProfileLimit("max_active_agents", p.Coordination.MaxActiveAgents); err != nil {
		return f, err
	}
	if f.MaxActiveWriters, err = policy.ParseProfileLimit("max_active_writers", p.Coordination.MaxActiveWriters); err != nil {
		return f, err
	}
	return f, nil
}

// DelegationInstruction closes a spawning role's prompt: how to answer.
func DelegationInstruction(role string, canSpawn []string) string {
	return fmt.Sprintf("\n\n## Delegation\nAs `%s` you may ask for child tasks, each run by a specialist role in its own run, branch and pull request. "+
		"End your run with one JSON object matching the output schema: `summary` is your report (what you did or planned, for the people reading the issue); "+
		"`delegate` lists the child tasks you ask for, possibly none. Each has `role` (one of %s), `objective` (what the child must achieve, self-contained), "+
		"`writeFiles` (the literal paths it alone may change; required for a role that writes, and no two children may share one), `files` (context it should read) "+
		"and `dependsOn` (indexes of earlier entries it must wait for). The action checks every request against the profile's limits and refuses the rest, with the reason.\n",
		role, strings.Join(texts.QuoteAll(canSpawn), ", "))
}

// ChildTitle is a child issue's title: the objective's first line, bounded.
func ChildTitle(objective string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(objective), "\n")
	return texts.OneLine(first, 100)
}
