package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/codex-studio/studio-action/bot"
)

// githubHTTP is the HTTP client of every GitHub API call: the bot's retrying transport
// (docs/reliability.md), each retry or wait logged as one line to log. The end-to-end tests swap
// it for one with a fake clock and short waits.
var githubHTTP = func(log io.Writer) *http.Client {
	return bot.NewHTTPClient(nil, bot.RetryPolicy{Log: func(format string, args ...any) {
		fmt.Fprintf(log, format+"\n", args...)
	}})
}
