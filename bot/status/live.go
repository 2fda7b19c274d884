package status

import (
	"regexp"
	"strings"

	"github.com/codex-studio/studio-action/bot/texts"
)

// The live section: while an agent's call runs, the run that holds the task's lock shows its
// progress under the checklist, after a hidden marker naming the run. The marker also tells a
// steer's own job that a live run watches the task's comments and will deliver the steer.

var liveMarkerRE = regexp.MustCompile(`<!-- studio:live ([0-9A-Za-z._-]+)/([0-9]+) -->`)

// maxLiveRunes bounds the live section: the status comment's record must always fit.
const maxLiveRunes = 6_000

// WithLive puts section, the live view of run (its id and attempt), under the checklist of body,
// a status comment Render wrote; "" leaves body as it is.
func WithLive(body, runID, attempt, section string) string {
	if section == "" || runID == "" {
		return body
	}
	if attempt == "" {
		attempt = "1"
	}
	lines := strings.SplitAfter(body, "\n")
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "### ") {
		i++
	}
	i += 2 // the header and the blank line under it
	for i < len(lines) && strings.HasPrefix(lines[i], "- ") {
		i++
	}
	if i > len(lines) {
		return body
	}
	block := "\n<!-- studio:live " + texts.MarkerWord(runID) + "/" + texts.MarkerWord(attempt) + " -->\n" + texts.FitClosed(section, "", maxLiveRunes)
	if !strings.HasSuffix(block, "\n") {
		block += "\n"
	}
	return strings.Join(lines[:i], "") + block + strings.Join(lines[i:], "")
}

// ParseLive returns the run (id and attempt) whose live section body shows; ok is false when
// it shows none.
func ParseLive(body string) (runID, attempt string, ok bool) {
	m := liveMarkerRE.FindStringSubmatch(body)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
