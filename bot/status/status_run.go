package status

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/texts"
)

// The status comment records which run wrote it and whether that run was still working
// (<!-- studio:run id=… attempt=… state=running|ended expires=… -->). A job killed without a chance
// to write its verdict (SIGKILL, a runner lost) leaves state=running behind; the next event on the
// issue holds the lock, so no live run can be behind that state: it records the dead run in the
// comment's history ("ended without a verdict") before going on. Broken locks are recorded there
// too. The history is kept between <!-- studio:history --> markers, newest last, at most
// maxHistory entries.

const MaxHistory = 10

// recordLine opens the bot's own record at the end of a status comment: the history, the steering
// notes, the run marker and the handled ids, none of which quotes anyone. Everything above it (step
// details, the summary) may quote users and the agent, markers and all, so the record is read only
// below the last recordLine, which the bot writes after all of it.
const recordLine = "<!-- studio:record -->"

// ownRecord is the part of a status comment the bot's record is read from: below the last
// recordLine, or the whole body of a comment written before there was one.
func ownRecord(body string) (string, bool) {
	if i := strings.LastIndex(body, "\n"+recordLine+"\n"); i >= 0 {
		return body[i:], true
	}
	return body, false
}

var (
	// The url is the run's own link; older comments have none and name it in the visible line.
	runMarkerRE   = regexp.MustCompile(`<!-- studio:run id=(\S*) attempt=(\S*) state=(\w+) expires=(\S*)(?: url=(\S*))? -->`)
	historyRE     = regexp.MustCompile(`(?s)<!-- studio:history -->\n(.*?)<!-- /studio:history -->`)
	workflowRunRE = regexp.MustCompile(`\n\[Workflow run\]\(([^)\s]+)\)\n`)
)

// RunRecord is what a status comment says about the run that last wrote it.
type RunRecord struct {
	Id, Attempt, State, Url string
	Expires                 time.Time
}

func ParseRunMarker(body string) (RunRecord, bool) {
	record, has := ownRecord(body)
	m := runMarkerRE.FindStringSubmatch(record)
	if m == nil {
		return RunRecord{}, false
	}
	p := RunRecord{Id: m[1], Attempt: m[2], State: m[3], Url: m[5]}
	p.Expires, _ = time.Parse(time.RFC3339, m[4])
	if u := workflowRunRE.FindStringSubmatch(body); u != nil && !has {
		p.Url = u[1]
	}
	return p, true
}

// threadMarker records Status.ThreadKept.
const threadMarker = "<!-- studio:thread kept -->"

// ParseThreadKept reads Status.ThreadKept back from the bot's own record.
func ParseThreadKept(body string) bool {
	record, _ := ownRecord(body)
	return strings.Contains(record, threadMarker)
}

var steerRE = regexp.MustCompile(`<!-- studio:steer ([A-Za-z0-9+/=]+) -->`)

// parseSteer reads the steering notes `/studio steer` left for the task's next pass.
func ParseSteer(body string) []string {
	record, _ := ownRecord(body)
	var out []string
	for _, m := range steerRE.FindAllStringSubmatch(record, -1) {
		if raw, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			out = append(out, string(raw))
		}
	}
	return out
}

func ParseHistory(body string) []string {
	record, _ := ownRecord(body)
	m := historyRE.FindStringSubmatch(record)
	if m == nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(m[1], "\n") {
		if e, ok := strings.CutPrefix(line, "- "); ok {
			out = append(out, e)
		}
	}
	return out
}

// running says whether the comment, as rendered now, shows a run still at work.
func (s *Status) Running() bool { return s.Verdict == "" && !s.Ended }

// renderRun is the hidden run marker and the visible history, placed above the handled marker in
// the record.
func (s *Status) RenderRun() string {
	var b strings.Builder
	if len(s.History) > 0 {
		b.WriteString("\n<!-- studio:history -->\n**History**\n")
		for _, e := range s.History {
			fmt.Fprintf(&b, "- %s\n", texts.HistoryEntry(e))
		}
		b.WriteString("<!-- /studio:history -->\n")
	}
	for _, note := range s.Steer {
		fmt.Fprintf(&b, "\n<!-- studio:steer %s -->", base64.StdEncoding.EncodeToString([]byte(note)))
	}
	if s.ThreadKept {
		b.WriteString("\n" + threadMarker)
	}
	if s.RunID != "" {
		state := "running"
		if !s.Running() {
			state = "ended"
		}
		expires := "-"
		if !s.Expires.IsZero() {
			expires = s.Expires.UTC().Format(time.RFC3339)
		}
		attempt := s.Attempt
		if attempt == "" {
			attempt = "1"
		}
		url := ""
		if s.RunURL != "" {
			url = " url=" + texts.MarkerWord(s.RunURL)
		}
		fmt.Fprintf(&b, "\n<!-- studio:run id=%s attempt=%s state=%s expires=%s%s -->", texts.MarkerWord(s.RunID), texts.MarkerWord(attempt), state, expires, url)
	}
	return b.String()
}
