// Package codex runs the Codex CLI for the bot: command construction, a secret-free process
// environment, run evidence, and (as it grows) verification and the review/fix lifecycle. It knows
// nothing about GitHub: it must not import go-github or the bot package.
package codex
