// Package guidance compiles a resolved multi-agent profile (.codex/profile.json) into
// deterministic Markdown guidance for Codex: one file per agent role and, when some role can
// request or control others, one orchestration skill. The texts map delegation onto GitHub
// (sub-issues, concurrency slots and write locks as git refs, review-based accept/reject,
// `/studio` controls). It reads and writes files only; it must not import go-github, bot or gitops.
package guidance
