// Package prompts owns everything Codex reads in a run: the built-in role catalog and its
// contracts as embedded Markdown (roles/), the built-in templates (templates/), the project's
// custom pack (.codex/studio/config.json), path-safe context selection and the Context
// Contract, the sanitizing of untrusted issue text, prompt rendering (implementation, review,
// fix, custom roles) and the dry-run report. Model routing lives here too (routing*.go);
// eligibility is decided by the policy package and arrives as strings in RunFacts. The
// profile-to-guidance compiler is the sub-package guidance.
//
// It reads files and returns text: it must not import go-github, bot, gitops or policy, and it
// never lists a directory while selecting context.
package prompts
