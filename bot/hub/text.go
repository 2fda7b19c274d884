package hub

import "github.com/codex-studio/studio-action/policy"

// OneLine is policy.OneLine: the adapter bounds the untrusted text it writes into one-line fields
// (a status description, an error naming an issue title) the same way the texts do.
func OneLine(s string, limit int) string { return policy.OneLine(s, limit) }

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
