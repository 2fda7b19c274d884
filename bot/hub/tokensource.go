package hub

import (
	"net/http"

	"github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"
)

// NewClientFromTokenSource is NewClient for a token that changes during the run (a GitHub App's
// installation token, refreshed before its hour is up): every call asks ts for the current token.
// The token is taken once per call, above the retrying Transport, so a call's retries carry the
// token it started with.
func NewClientFromTokenSource(httpClient *http.Client, apiURL string, ts oauth2.TokenSource, owner, repo string, opts ...ClientOption) (*Client, error) {
	httpClient, policy := withRetries(httpClient)
	authed := *httpClient
	authed.Transport = &oauth2.Transport{Source: ts, Base: httpClient.Transport}
	return newClient(github.NewClient(&authed), policy, apiURL, owner, repo, opts)
}
