//go:build !linux

package gitops

import "context"

// startHint is Linux's (it needs openat2 to read beneath the workspace in one call per file):
// elsewhere git reads the files itself during the first scan.
func startHint(context.Context, string, string) *statHint { return nil }

// hashEntries is Linux's too: elsewhere git reads the files whose stat data is not known.
func hashEntries(context.Context, string, []*hintEntry) {}

// checkWorkTree is Linux's too: elsewhere git's scan decides.
func checkWorkTree(context.Context, string, []seedDir, []hintEntry) (bool, []extraName) {
	return false, nil
}

// listOthers is Linux's too: elsewhere `git ls-files --others` lists.
func listOthers(context.Context, string, []hintEntry) ([]byte, []string, bool) {
	return nil, nil, false
}
