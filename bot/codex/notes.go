package codex

import (
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/bot/texts"
)

// What a call's result says to people: the notes the status comment, the job summary and the
// pull request carry about a cut output, leftovers, a failure, a review, a refusal or a limit.

// OutputCutNote tells the reader that Codex printed more than the evidence keeps (a flood of its
// output, the agent's doing or a runaway command's), and where what was kept is.
func OutputCutNote(c OutputCut) string {
	if !c.Any() {
		return ""
	}
	return "\n\n**Output cut:** " + c.String() + "; the run's `events.jsonl` says which call."
}

// LeftoversNote tells the reader that the agent left processes running after its calls (the
// studio killed them): harmless once killed, but a sign of an agent trying to outlive its call.
func LeftoversNote(n int) string {
	if n == 0 {
		return ""
	}
	return "\n\n**Leftovers:** " + LeftoversLine(n) + " after its calls ended; the studio killed them before using any credential."
}

// PassesNote counts the fix passes a step took, for its line (", 2 fix passes").
func PassesNote(out Outcome) string {
	if n := len(out.FixPasses); n > 0 {
		return fmt.Sprintf(", %d fix %s", n, texts.Plural(n, "pass", "passes"))
	}
	return ""
}

// FailureLine is why a call failed, in one line that says how to go on where there is a way.
func FailureLine(res Result) string {
	switch {
	case res.TimedOut:
		return "Codex timed out; the work it finished inside writeFiles is kept on the branch"
	case errors.As(res.Err, new(*BudgetError)):
		return res.Err.Error() // budget reached: the words say how to continue
	case errors.As(res.Err, new(*LimitError)):
		s := res.Err.Error() // a per-call limit: the words say which and how to raise it
		return strings.ToUpper(s[:1]) + s[1:]
	case res.Err != nil:
		return "Codex could not run: " + res.Err.Error()
	}
	return fmt.Sprintf("Codex exited with status %d", res.ExitCode)
}

// FailureSummary is FailureLine with the tail of Codex's stderr, quoted as untrusted text.
func FailureSummary(res Result) string {
	s := FailureLine(res)
	if tail := texts.LastLines(res.Stderr, 20); tail != "" {
		s += "\n\n" + texts.DetailsBlock("Codex stderr (tail)", texts.UntrustedBlock(tail))
	}
	return s
}

// ReviewBody is the review the studio posts on the pull request: passed or changes requested,
// then the reviewer's own words quoted as text.
func ReviewBody(rev ReviewOutcome, passed bool, blockers []Blocker) string {
	var b strings.Builder
	if passed {
		b.WriteString("### Studio review: passed\n")
	} else {
		b.WriteString("### Studio review: changes requested\n")
	}
	// Everything after the heading is the reviewer's (model output): quoted as text.
	switch {
	case rev.Malformed != "":
		fmt.Fprintf(&b, "\nThe review could not be read: %s\n", texts.ShownLine(rev.Malformed, 500))
	case rev.Verdict != nil:
		if s := strings.TrimSpace(rev.Verdict.Summary); s != "" {
			fmt.Fprintf(&b, "\nThe reviewer's summary, quoted as text:\n\n%s\n", texts.UntrustedBlock(texts.OneLine(s, 2000)))
		}
		if rev.Verdict.NeedsFix && len(rev.Verdict.Blockers) == 0 {
			b.WriteString("\nThe reviewer says the change needs a fix.\n")
		}
	}
	if len(blockers) > 0 {
		items := make([]string, len(blockers))
		for i, bl := range blockers {
			items[i] = texts.OneLine(bl.String(), 1000)
		}
		b.WriteString("\n**Blockers**\n\n" + texts.UntrustedList(items, texts.MaxListed) + "\n")
	}
	if rev.Verdict != nil && len(rev.Verdict.Warnings) > 0 {
		items := make([]string, len(rev.Verdict.Warnings))
		for i, w := range rev.Verdict.Warnings {
			items[i] = texts.OneLine(w, 1000)
		}
		b.WriteString("\n**Warnings**\n\n" + texts.UntrustedList(items, texts.MaxListed) + "\n")
	}
	return b.String()
}

// RefusalHint says what to change after a refusal, naming the action's inputs (and, for the
// local CLI, the variables standing in for them).
func RefusalHint(ref *APIRefusal) string {
	const secret = "the `OPENAI_API_KEY` repository secret the workflow passes as the `openai-api-key` input (locally: the `OPENAI_API_KEY` variable)"
	const baseURL = "the `openai-base-url` input (empty means the OpenAI API; locally: the `OPENAI_BASE_URL` variable)"
	switch ref.Kind {
	case RefusedKey:
		if ref.Status == 403 {
			return "the key may not make this request (a restricted key, or a project without access to the Responses API or to this region): give its project that access, or put another key in " + secret + "."
		}
		return "the API does not accept the key: put a valid key in " + secret + "."
	case RefusedModel:
		model := "the model"
		if ref.Model != "" {
			model = "the model " + texts.CodeSpan(ref.Model)
		}
		return model + " is not available to this key: set the `model` input to a model the account can use (or the role's `model` in `.codex/agents/<role>.toml`, or the `model-tier` input), or use a key whose project has access to it."
	case RefusedEndpoint:
		return "the endpoint answered 404 for the Responses API: check " + baseURL + "; a custom endpoint needs its versioned base (such as `https://host/v1`), to which `/responses` is added."
	case RefusedQuota:
		return "the account behind the key has no quota left: add credit or raise the limit in its billing settings, or put another project's key in " + secret + "."
	case RefusedRateLimit:
		return "the API kept answering 429 (too many requests) after Codex's retries: wait a minute and run again; if it keeps happening, raise the project's rate limits or run fewer tasks at once."
	case RefusedUnreachable:
		return "the model API could not be reached, or stopped answering: check " + baseURL + " and that the runner can reach that host (a firewall, a proxy, an outage)."
	}
	return "the model API failed on its side after Codex's retries: nothing in the workflow needs to change; run again later, and if it persists check the provider's status or " + baseURL + "."
}

// RefusalNote is the status comment's and the job summary's account of a refusal: what happened,
// the API's words quoted as untrusted text (redacted before they get here), what to change.
// again is the command to comment once it is fixed ("/studio run").
func RefusalNote(ref *APIRefusal, again string) string {
	head := ref.Headline()
	words := "The API's answer as Codex reported it"
	if ref.Kind == RefusedUnreachable {
		words = "What Codex reported"
	}
	return fmt.Sprintf("**%s**, so the run stopped there: no fix pass or review was spent on a call that would meet the same answer. %s, quoted as untrusted text:\n\n%s\n\n**What to change:** %s Then comment `%s` again.",
		strings.ToUpper(head[:1])+head[1:], words, texts.Fenced(ref.Message, "text"), RefusalHint(ref), again)
}

// RefusalFailure is the one line the step's error annotation carries.
func RefusalFailure(ref *APIRefusal) string {
	return texts.OneLine(ref.Error(), 600) + " — what to change: " + RefusalHint(ref)
}

// LimitNote says a call of the run reached a per-call limit: which, its value, and the input that
// raises it.
func LimitNote(h jail.LimitHit) string {
	what := "was killed at its memory limit"
	if h.Resource == jail.LimitProcesses {
		what = "could start no more processes at its process limit"
	}
	return fmt.Sprintf("**Limit reached:** a call of the agent %s (%s). If the task needs more, raise it in the workflow's `with:`, for example `%s: %s`.", what, h.Shown(), h.Input(), h.Raised())
}
