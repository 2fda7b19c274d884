package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Blocker is one review blocker. The seed's verdict has plain strings; the action also asks for
// a file and line so a blocker inside the diff can become an inline pull-request comment. Both
// shapes decode.
type Blocker struct {
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
}

// errBlockerShape is the seed's text for any blockers value that is neither form.
var errBlockerShape = errors.New("review JSON blockers must be string[]")

// UnmarshalJSON accepts "text" or {"message": "text", "file": "...", "line": N}; file and line may
// be null or absent (strict structured output makes the model send null for "no location").
func (b *Blocker) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return errBlockerShape
		}
		*b = Blocker{Message: s}
		return nil
	}
	var obj struct {
		Message *string `json:"message"`
		File    *string `json:"file"`
		Line    *int    `json:"line"`
	}
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &obj) != nil || obj.Message == nil {
		return errBlockerShape
	}
	*b = Blocker{Message: *obj.Message}
	if obj.File != nil {
		b.File = *obj.File
	}
	if obj.Line != nil && *obj.Line > 0 {
		b.Line = *obj.Line
	}
	return nil
}

// String renders a blocker for lifecycle lines and fix prompts: "file:line: message".
func (b Blocker) String() string {
	switch {
	case b.File != "" && b.Line > 0:
		return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Message)
	case b.File != "":
		return b.File + ": " + b.Message
	}
	return b.Message
}

// Verdict is the review's answer (seed §6.3).
type Verdict struct {
	Blockers []Blocker `json:"blockers"`
	Warnings []string  `json:"warnings"`
	Summary  string    `json:"summary"`
	NeedsFix bool      `json:"needsFix"`
}

// Blocks reports whether the verdict stops the run: any blocker or needsFix. Warnings never block.
func (v Verdict) Blocks() bool { return v.NeedsFix || len(v.Blockers) > 0 }

// ReviewSchema is the JSON Schema passed with --output-schema. Codex sends it as a strict
// json_schema format, and strict mode wants every property required and no extra keys, so "no
// location" is null rather than absent. The model is asked for objects; ParseReview still takes
// the seed's strings because Codex does not enforce the schema.
const ReviewSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["blockers", "warnings", "summary", "needsFix"],
  "properties": {
    "blockers": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["message", "file", "line"],
        "properties": {
          "message": {"type": "string"},
          "file": {"type": ["string", "null"], "description": "repository-relative path the blocker is about"},
          "line": {"type": ["integer", "null"], "description": "line in the new version of file"}
        }
      }
    },
    "warnings": {"type": "array", "items": {"type": "string"}},
    "summary": {"type": "string"},
    "needsFix": {"type": "boolean"}
  }
}
`

// ParseReview validates a review answer (seed §6.3 parseReviewJson). Appendix A 12 takes stdout
// or stderr; with --json stdout is the event stream and stderr holds banners whose braces would
// mislead, so the input here is the final message alone. The first-{ to last-} cut is kept: it
// tolerates prose or a code fence around the object. Error texts are the seed's.
func ParseReview(finalMessage string) (Verdict, error) {
	text := strings.TrimSpace(finalMessage)
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return Verdict{}, errors.New("review output did not contain a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err != nil {
		return Verdict{}, fmt.Errorf("review JSON does not parse: %w", err)
	}
	var v Verdict
	if err := decodeField(raw, "blockers", &v.Blockers, true); err != nil {
		return Verdict{}, errBlockerShape
	}
	if err := decodeField(raw, "warnings", &v.Warnings, true); err != nil {
		return Verdict{}, errors.New("review JSON warnings must be string[]")
	}
	if err := decodeField(raw, "summary", &v.Summary, false); err != nil {
		return Verdict{}, errors.New("review JSON summary must be a string")
	}
	if err := decodeField(raw, "needsFix", &v.NeedsFix, false); err != nil {
		return Verdict{}, errors.New("review JSON needsFix must be boolean")
	}
	return v, nil
}

// decodeField decodes raw[key] into dst; a missing key or null is an error, an array must be one.
func decodeField(raw map[string]json.RawMessage, key string, dst any, array bool) error {
	data, ok := raw[key]
	if !ok || string(bytes.TrimSpace(data)) == "null" {
		return errors.New("missing")
	}
	if array && !bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		return errors.New("not an array")
	}
	return json.Unmarshal(data, dst)
}

// ReviewOutcome is one review step: the Codex call, the raw answer, and either the verdict or why
// it is malformed.
type ReviewOutcome struct {
	Execution Execution `json:"execution"`
	Raw       string    `json:"raw"`
	Verdict   *Verdict  `json:"verdict,omitempty"`
	Malformed string    `json:"malformed,omitempty"`
}

// Failed is seed §6.3: a failed call, malformed JSON, needsFix or any blocker.
func (r ReviewOutcome) Failed() bool {
	return r.Execution.Failed() || r.Malformed != "" || r.Verdict == nil || r.Verdict.Blocks()
}

// NewReviewOutcome judges a review call. As in the seed, a failed call counts as malformed with
// its error (or "review exited with status N") as the reason.
func NewReviewOutcome(exe Execution) ReviewOutcome {
	out := ReviewOutcome{Execution: exe, Raw: exe.Result.FinalMessage}
	switch res := exe.Result; {
	case res.Err != nil:
		out.Malformed = res.Err.Error()
	case res.ExitCode != 0:
		out.Malformed = fmt.Sprintf("review exited with status %d", res.ExitCode)
	default:
		v, err := ParseReview(out.Raw)
		if err != nil {
			out.Malformed = err.Error()
		} else {
			out.Verdict = &v
		}
	}
	return out
}

// Lines renders the seed's review lines.
func (r ReviewOutcome) Lines() []string {
	// The raw answer is not repeated: the verdict lines below say what it held. A failed call keeps
	// its stderr, which explains the failure.
	lines := r.Execution.Lines("review")[:1]
	if n := r.Execution.Leftovers(); n > 0 {
		lines = append(lines, "review: "+LeftoversLine(n))
	}
	if r.Execution.Failed() {
		lines = r.Execution.Lines("review")
	}
	if r.Malformed != "" {
		return append(lines, "review blocked: malformed review JSON ("+r.Malformed+")")
	}
	v := r.Verdict
	if v == nil {
		return lines
	}
	lines = append(lines, "review summary: "+v.Summary, fmt.Sprintf("review needsFix: %t", v.NeedsFix))
	if len(v.Blockers) > 0 {
		var b strings.Builder
		b.WriteString("review blockers:")
		for _, bl := range v.Blockers {
			b.WriteString("\n- " + bl.String())
		}
		lines = append(lines, b.String())
	}
	if len(v.Warnings) > 0 {
		lines = append(lines, "review warnings:\n- "+strings.Join(v.Warnings, "\n- "))
	}
	return lines
}

// SplitBlockers separates blockers the bot can post as inline pull-request comments (they name a
// file and line that inDiff accepts) from those that belong in the review body. The diff test is
// the caller's: only it knows the pull request's hunks.
func (v Verdict) SplitBlockers(inDiff func(file string, line int) bool) (inline, body []Blocker) {
	for _, b := range v.Blockers {
		if b.File != "" && b.Line > 0 && inDiff != nil && inDiff(b.File, b.Line) {
			inline = append(inline, b)
		} else {
			body = append(body, b)
		}
	}
	return inline, body
}
