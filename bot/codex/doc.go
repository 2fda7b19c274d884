// Package codex runs the Codex CLI for the bot: the key-holding model proxy, command
// construction with hardening flags, a secret-free agent environment, the judgement of each call
// from its --json event stream, model fallback, verification (seed §8), the read-only review and
// its verdict, the implement/verify/review/fix lifecycle (seed §9.3) with hooks for the bot, and
// redacted run evidence.
//
// Entry points: Start (proxy + runner + redactor), Lifecycle.Run with a Plan and Hooks, and the
// pieces they use (Verify, ParseReview, RunWithFallback, RunIDs, NewEvidence) for callers that need
// one step alone. docs/runtime.md describes the behaviour.
//
// It knows nothing about GitHub: it must not import go-github, gitops or the bot package. Model
// routing comes from prompts; prompt text is passed in, never built here.
package codex
