//go:build !linux

package jail

import "os"

// Without /proc there is no way to ask where a directory went: a moved .git is recreated from
// what the guard recorded (without its objects).
func holdDir(string) *os.File { return nil }

func movedTo(*os.File) string { return "" }
