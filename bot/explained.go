package bot

import "github.com/codex-studio/studio-action/bot/hub"

// explained carries an error whose text is already the actionable explanation, for places that
// keep only the text (the lifecycle's blocked reason).
type explained struct{ err error }

func (e explained) Error() string { return hub.Explain(e.err) }
func (e explained) Unwrap() error { return e.err }

func explain(err error) error {
	if err == nil {
		return nil
	}
	return explained{err}
}
