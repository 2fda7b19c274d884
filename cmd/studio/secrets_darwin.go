package main

import "os"

// pipeBuffer is unknown on macOS: there is no F_GETPIPE_SZ, and the kernel sizes a pipe's buffer
// itself as it is written. 0 leaves the bound to the write's deadline in reexec: secrets that do
// not fit fail the run, they never hang it. (A runner's secrets are a few KiB.)
func pipeBuffer(*os.File) (int, error) { return 0, nil }

// selfExe is the path the binary was started from (macOS has no /proc/self/exe): a binary
// replaced in place since would be the one re-executed, which the action's install step, the
// only writer of that path, does not do while the studio runs.
func selfExe() (string, error) { return os.Executable() }
