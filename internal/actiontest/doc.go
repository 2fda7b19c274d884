// Package actiontest checks how the action is packaged and shipped: action.yml (a composite
// action), the scripts it runs (scripts/install-studio, scripts/run-studio) and the workflows the
// project ships, linted with actionlint. It has no code of its own, only tests.
package actiontest
