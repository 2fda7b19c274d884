package threads

import (
	"context"
	"errors"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Session is one run's dealings with its task's kept thread: what it found before the agent's
// calls and what it keeps after them.
type Session struct {
	Store *Store // nil: no thread is kept (the exec engine, a local run)
	Issue int
	// Chain is the task's runs so far; Resumed says this run went on in the kept thread.
	Chain   []Link
	Resumed bool
	// Note says why a kept thread was not resumed, or this run's not kept ("" for neither).
	Note string
	// Known says a thread was kept before (the status record says so): only then does Find read
	// the ref for a plain run, and Keep moves it rather than creating it.
	Known bool
}

// Find loads the task's kept thread and returns it when the run resumes it (policy.DecideResume,
// with f's Kept, KeptRole and LastEnded filled from what is kept); nil when the run starts a new
// thread, with Note saying why where a person would expect otherwise.
func (s *Session) Find(ctx context.Context, f policy.ResumeFacts) *Kept {
	var kept *Kept
	if s.Store != nil && (s.Known || f.Continue) {
		var err error
		var u *Unusable
		kept, err = s.Store.Load(ctx, s.Issue)
		s.Known = kept != nil || errors.As(err, &u)
		switch {
		case errors.As(err, &u):
			s.Note = u.Error() + "; a new thread starts"
		case err != nil:
			s.Note = "the kept thread could not be read (" + hub.Explain(err) + "); a new thread starts"
		}
	}
	f.Live = s.Store != nil
	if kept != nil {
		s.Chain = kept.Record.Chain
		f.Kept, f.KeptRole, f.LastEnded = kept.Rollout != nil, kept.Record.Role, kept.Record.Last().Ended
	}
	resume, why := policy.DecideResume(f)
	if s.Note == "" {
		s.Note = why
	}
	if !resume {
		return nil
	}
	s.Resumed = true
	return kept
}

// Keep keeps the run's thread (rec, rollout) with link added to the task's chain; with no thread
// to keep (rollout nil) it only says so. It reports whether the thread was stored.
func (s *Session) Keep(ctx context.Context, link Link, rec Record, rollout []byte, resumeNote string) bool {
	if resumeNote != "" {
		s.Note = "the kept thread could not be resumed (" + resumeNote + "); a new one started"
	}
	link.Resumed = s.Resumed && resumeNote == ""
	if rollout == nil {
		if s.Note == "" {
			s.Note = "this run's thread could not be read back; the lifecycle's lines say why"
		}
		return false
	}
	link.Thread, rec.Chain = rec.Thread, append(s.Chain, link)
	saved, err := s.Store.Save(ctx, s.Issue, rec, rollout, s.Known)
	if err != nil {
		s.Note = "it could not be stored (" + hub.Explain(err) + ")"
		return false
	}
	s.Chain, s.Known = saved.Chain, true
	return true
}

// Section is the status comment's section on the thread: where it is kept (kept says this run's
// was), how to go on, the chain and the note.
func (s *Session) Section(trigger string, kept bool) string {
	chain := make([]texts.ThreadLink, len(s.Chain))
	for i, l := range s.Chain {
		chain[i] = texts.ThreadLink(l)
	}
	return texts.ThreadKept(trigger, Ref(s.Issue), kept, chain, s.Note)
}
