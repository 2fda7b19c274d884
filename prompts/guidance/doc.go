// Package guidance compiles a resolved multi-agent profile (.codex/profile.json) into
// deterministic Markdown guidance for Codex: one file per agent role and, when some role can
// request or control others, one orchestration skill. Until the action files child tasks, the
// texts offer only Codex native subagents and name only the /studio commands in prompts.Verbs;
// durable follow-up work goes into the final report. It reads and writes files only; it must not
// import go-github, bot or gitops.
package guidance
