package bot

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
)

// The status comment records which run wrote it and whether that run was still working
// (<!-- studio:run id=… attempt=… state=running|ended expires=… -->). A job killed without a chance
// to write its verdict (SIGKILL, a runner lost) leaves state=running behind; the next event on the
// issue holds the lock, so no live run can be behind that state: it records the dead run in the
// comment's history ("ended without a verdict") before going on. Broken locks are recorded there
// too. The history is kept between <!-- studio:history --> markers, newest last, at most
// maxHistory entries.

const maxHistory = 10

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

// prevRun is what a status comment says about the run that last wrote it.
type prevRun struct {
	id, attempt, state, url string
	expires                 time.Time
}

func parseRunMarker(body string) (prevRun, bool) {
	record, has := ownRecord(body)
	m := runMarkerRE.FindStringSubmatch(record)
	if m == nil {
		return prevRun{}, false
	}
	p := prevRun{id: m[1], attempt: m[2], state: m[3], url: m[5]}
	p.expires, _ = time.Parse(time.RFC3339, m[4])
	if u := workflowRunRE.FindStringSubmatch(body); u != nil && !has {
		p.url = u[1]
	}
	return p, true
}

var steerRE = regexp.MustCompile(`<!-- studio:steer ([A-Za-z0-9+/=]+) -->`)

// parseSteer reads the steering notes `/studio steer` left for the task's next pass.
func parseSteer(body string) []string {
	record, _ := ownRecord(body)
	var out []string
	for _, m := range steerRE.FindAllStringSubmatch(record, -1) {
		if raw, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			out = append(out, string(raw))
		}
	}
	return out
}

func parseHistory(body string) []string {
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
func (s *Status) running() bool { return s.Verdict == "" && !s.Ended }

// renderRun is the hidden run marker and the visible history, placed above the handled marker in
// the record.
func (s *Status) renderRun() string {
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
	if s.RunID != "" {
		state := "running"
		if !s.running() {
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

// runStatus builds this run's status for an issue from the status comment found there (if any):
// the handled ids and the history carry over, a dead run's "running" is recorded, and so is a lock
// this run had to break.
func (b *eventBot) runStatus(issue int, sc hub.Comment, has bool) *Status {
	st := newStatus(issue, b.RunURL, parseHandled(sc.Body))
	st.RunID, st.Attempt = b.RunID, b.RunAttempt
	if st.Attempt == "" {
		st.Attempt = "1"
	}
	if b.lock != nil {
		st.Expires = b.lock.Rec.Expires
	}
	if !has {
		st.History = b.brokenLockNote(nil, "")
		return st
	}
	st.History = parseHistory(sc.Body)
	st.Steer = parseSteer(sc.Body)
	st.Deliveries = parseDeliveries(sc.Body)
	deadRun := ""
	if prev, ok := parseRunMarker(sc.Body); ok && prev.state == "running" && (prev.id != st.RunID || prev.attempt != st.Attempt) {
		note := texts.DeadRunNote(texts.RunWho("Run", prev.id, prev.attempt, prev.url), sc.UpdatedAt)
		st.History = append(st.History, note)
		b.logf("::warning::status: %s", note)
		deadRun = prev.id + "/" + prev.attempt
	}
	st.History = b.brokenLockNote(st.History, deadRun)
	if n := len(st.History); n > maxHistory {
		st.History = st.History[n-maxHistory:]
	}
	return st
}

// brokenLockNote adds, once per run, the note that this run broke a dead run's lock.
func (b *eventBot) brokenLockNote(history []string, deadRun string) []string {
	if b.lock == nil || b.lock.Broken == nil || b.lock.Noted {
		return history
	}
	b.lock.Noted = true
	old := b.lock.Broken
	attempt := old.Attempt
	if attempt == "" {
		attempt = "1"
	}
	what := "its lock"
	if old.Run+"/"+attempt == deadRun {
		what = "its lock, too,"
	}
	return append(history, texts.BrokenLockEntry(*old, what, b.lock.Rec, b.RunID, b.lock.BrokenWhy))
}

// notePublished remembers the last run to write each status comment, for settle.
func (b *eventBot) notePublished(r *run) {
	if b.published == nil {
		b.published = map[int64]*run{}
	}
	b.published[r.statusID] = r
}

// settle is called when the locked work ends: a status comment this run left saying "running"
// (flows that end without a verdict: a plan waiting for approval, a revoke, a review) is rewritten
// as ended, so the next run does not take this one for dead.
func (b *eventBot) settle(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, r := range b.published {
		if !r.st.running() {
			continue
		}
		r.st.Ended = true
		if err := r.publish(ctx); err != nil {
			b.logf("::warning::could not mark the status comment of #%d as ended: %v", r.tr.Issue, err)
		}
	}
	b.published = nil
}
