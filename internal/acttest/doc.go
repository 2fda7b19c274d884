// Package acttest runs the composite action (action.yml) under nektos/act, a real implementation
// of the Actions runner, in its self-hosted mode (steps run on the host, no Docker), against the
// GitHub emulator (internal/ghemu) with the scripted fake Codex (internal/fakecodex): the
// composite steps, scripts/install-studio, scripts/run-studio (through real sudo) and
// scripts/report-install-failure run as a runner runs them, and the tests assert what lands on
// the emulated repository. TestThreeStepsFromNothingToAMergedPullRequest plays README's Quick start
// instead: the workflow `studio init` writes, with the real Codex CLI (internal/codextest) and the
// scripted model server (internal/fakemodel), from an empty studio set-up to a merged pull request.
//
// act is built from its pinned module version into the user's cache directory on first use; it
// is not a dependency of the project's module. The package has no code of its own, only tests;
// it may import the test-support packages (ghemu, fakecodex, fakemodel, codextest, sandbox), never
// the bot.
package acttest
