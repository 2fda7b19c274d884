// Package prompts owns everything Codex reads: the built-in role catalog and its contracts as
// embedded templates, context selection and the context contract, model routing, prompt rendering
// and the profile-to-guidance compiler. It is pure text and file reading: it must not import
// go-github, bot or gitops.
package prompts
