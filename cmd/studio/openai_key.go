package main

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/codex-studio/studio-action/bot/codex"
)

// errNoOpenAIKey names the input and the secret to set.
var errNoOpenAIKey = errors.New("the openai-api-key input is empty: add an OPENAI_API_KEY repository secret (Settings → Secrets and variables → Actions) and pass `openai-api-key: ${{ secrets.OPENAI_API_KEY }}` to the action")

// keylessRunner stands in for Codex when openai-api-key is empty. Events that never reach Codex
// (a skip, a refusal, an approval that only updates a check) run as usual; the first Codex call
// fails with errNoOpenAIKey, and the action then fails naming the input.
type keylessRunner struct{ called atomic.Bool }

func (k *keylessRunner) Run(context.Context, codex.Request) codex.Result {
	k.called.Store(true)
	return codex.Result{ExitCode: -1, Err: errNoOpenAIKey}
}

// used says whether the run needed Codex, and so the key.
func (k *keylessRunner) used() bool { return k != nil && k.called.Load() }
