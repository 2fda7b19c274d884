//go:build !linux

package gitops

// openat2Beneath is Linux's: elsewhere (macOS) the caller always walks the path one component
// at a time (walkBeneath), which gives the same guarantee with more system calls.
func openat2Beneath(int, string) (int, bool, error) { return -1, false, nil }
