// Package hub is the studio's GitHub adapter: the go-github client for one repository (the API
// URL from GITHUB_API_URL, retries, rate limits, checked creates, pagination, refusal diagnosis),
// the domain types and errors it converts to at the boundary, the per-event Memo in front of it,
// and LocalGitHub, the printing stand-in of a local run. It owns every go-github call of the flow.
//
// It must not import bot or anything above it: what it needs of the bot (which comment is the
// status comment, what the checkout holds) is passed in.
package hub
