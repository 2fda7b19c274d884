// Package actiontest checks how the action is packaged and shipped: action.yml (a composite
// action), the scripts it runs (scripts/install-studio, scripts/run-studio), the workflows the
// project ships or `studio init` writes, linted with actionlint, and the issue form init writes.
// It has no code of its own, only tests.
package actiontest
