package texts

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/egress"
)

// maxHostsShown bounds the hosts the status line names; the rest are counted.
const maxHostsShown = 12

// networkLine is the status comment's line on the run's network. Open, and a jail that cannot
// confine the network, are said out loud, as an unconfined agent is.
func NetworkLine(mode egress.Mode, allow egress.List, ecosystems, notes []string, confined bool) string {
	var line string
	switch {
	case mode == egress.Open:
		line = "**Network open:** the agent and the verification reach any host (`network: open`); set `network: allow-list` to confine them."
	case !confined:
		line = "**Network not confined:** without the sandbox the agent and the verification reach any host (the uid jail cannot give a call a network namespace of its own)."
	case mode == egress.ModelOnly:
		line = "**Network:** model only: the agent reaches the model and no other host (`network: model-only`)."
	default:
		line = "**Network:** the model"
		if hosts := allow.Entries(); len(hosts) > 0 {
			shown := hosts
			if len(shown) > maxHostsShown {
				shown = shown[:maxHostsShown]
			}
			line += " and " + policy.Count(len(hosts)) + " allowed " + Plural(len(hosts), "host", "hosts") + ": " + codeSpans(shown)
			if n := len(hosts) - len(shown); n > 0 {
				line += fmt.Sprintf(" and %s more", policy.Count(n))
			}
		} else {
			line += " only (no host is on the allow-list)"
		}
		if len(ecosystems) > 0 {
			line += " (recommended for " + strings.Join(ecosystems, ", ") + ")"
		}
		line += "; anything else is blocked and listed here."
	}
	for _, n := range notes {
		line += " Note: " + n + "."
	}
	return line
}

// codeSpans writes entries (checked host names and addresses) inline, each in a code span.
func codeSpans(items []string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = "`" + it + "`"
	}
	return strings.Join(parts, ", ")
}

// networkBlocks is the section on what the egress proxy refused: each host, port and the command
// that tried (the agent's words, so in a fence it cannot close), and how to allow a host. A failed
// verification after a block is told the block may be why.
func NetworkBlocks(b egress.Blocks, verifyFailed bool) string {
	if b.Total == 0 {
		return ""
	}
	var items []string
	for _, k := range b.Kept() {
		host := k.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		item := fmt.Sprintf("%s:%d", host, k.Port)
		if k.Command != "" {
			item += " by: " + OneLine(k.Command, 200)
		}
		if k.Count > 1 {
			item += fmt.Sprintf(" (%d times)", k.Count)
		}
		items = append(items, item+"\n"+k.Reason)
	}
	s := fmt.Sprintf("\n\n**Network: %s %s blocked.**", policy.Count(b.Total), Plural(b.Total, "connection", "connections"))
	if verifyFailed {
		s += " The verification failed after a block: the block may be the cause."
	}
	s += "\n\n" + UntrustedList(items, MaxListed)
	if b.Dropped > 0 {
		s += fmt.Sprintf("\n\n_%s more %s not listed._", policy.Count(b.Dropped), Plural(b.Dropped, "block is", "blocks are"))
	}
	if hosts := b.Hosts(); len(hosts) > 0 {
		s += "\n\nTo allow a host, add it to the `allow-hosts` input or to `network.allowHosts` in `" + policy.StudioConfigPath + "`; a task may name its own in its block (`allowHosts`)."
	}
	return s
}
