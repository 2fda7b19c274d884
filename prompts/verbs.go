package prompts

import (
	"regexp"
	"sort"
	"strings"
)

// Verbs are the `/studio` commands the action has, in bot's table order. Guidance and role
// contracts may mention only these; bot's TestPromptVerbsMatchTheDispatcher keeps this list
// equal to the dispatcher's table (prompts must not import bot).
var Verbs = []string{"run", "workflow", "task", "accept", "orchestrate", "revoke", "review", "help", "status", "steer", "pause", "continue", "stop"}

// VerbsSentence lists Verbs as Markdown code spans: "`/studio run`, ... and `/studio help`".
func VerbsSentence() string {
	names := make([]string, len(Verbs))
	for i, v := range Verbs {
		names[i] = "`/studio " + v + "`"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

var verbMention = regexp.MustCompile("/studio[ \t]+([a-z][a-z-]*)")

// MentionedVerbs returns, sorted and without repeats, every word that follows "/studio " in
// text: the commands the text tells its reader about.
func MentionedVerbs(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range verbMention.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// UnknownVerbs returns the mentioned verbs that are not in Verbs.
func UnknownVerbs(text string) []string {
	var out []string
	for _, v := range MentionedVerbs(text) {
		known := false
		for _, k := range Verbs {
			known = known || k == v
		}
		if !known {
			out = append(out, v)
		}
	}
	return out
}
