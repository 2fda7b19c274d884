// Package ghemu owns the project's stateful GitHub emulator: an HTTP server that speaks the
// subset of GitHub's REST API (laid out as GitHub Enterprise Server does, under /api/v3) and
// Git smart-HTTP protocol that the bot uses, backed by in-memory issues, pull requests, reviews,
// labels, reactions, check runs and statuses, and by real bare git repositories on disk.
//
// Tests and `studio demo` seed it and inspect it through plain Go methods (AddUser, CreateRepo,
// CommitFiles, CreateIssue, Comments, Reviews, ...); the bot talks to it over HTTP with an
// unmodified go-github client and the git CLI, so the same code paths run as against GitHub.
// Responses follow GitHub's OpenAPI description (checked by the conformance test in this
// package), including status codes, error bodies and rate-limit headers.
//
// The package must not import the bot's own packages: it models GitHub, not the bot. It may
// import ghfixtures to build webhook payloads from GitHub's official examples.
package ghemu
