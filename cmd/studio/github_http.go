package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/codex-studio/studio-action/bot/hub"
)

// githubHTTP is the HTTP client of every GitHub API call: the bot's retrying transport
// (docs/reliability.md), each retry or wait logged as one line to log. The end-to-end tests swap
// it for one with a fake clock and short waits.
var githubHTTP = func(log io.Writer) *http.Client {
	return hub.NewHTTPClient(nil, hub.RetryPolicy{Log: func(format string, args ...any) {
		fmt.Fprintf(log, format+"\n", args...)
	}})
}
