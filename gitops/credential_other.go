//go:build !linux

package gitops

// platformHandoff is the pipe off Linux: macOS has no memfd_create and no /proc (see
// credential.go and docs/security.md).
func platformHandoff(token string) (*handoff, error) { return pipeHandoff(token) }
