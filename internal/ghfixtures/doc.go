// Package ghfixtures owns GitHub's official webhook payload examples (octokit/webhooks, MIT,
// embedded verbatim under webhooks/) and the builders that re-point a copy of one at other
// state: the repository, sender, issue, comment, label, pull request or review objects are
// replaced by the caller's JSON (typically the GitHub emulator's), and every other field stays
// exactly as GitHub sent it.
//
// It is data plus JSON surgery: it must not import go-github, the emulator or the bot, so
// every package can use it in tests.
package ghfixtures
