package gitops

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReadRegular reads root/rel only when it and every directory between it and root are what they
// seem: a symlink anywhere below root is treated as absent (fs.ErrNotExist), as is a path that
// climbs out of root. The studio reads the default branch's files from the workspace with it,
// never through a link something planted there.
func ReadRegular(root, rel string) ([]byte, error) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	cur := root
	for i, p := range parts {
		if p == ".." || p == "" {
			return nil, fs.ErrNotExist
		}
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || (i < len(parts)-1 && !fi.IsDir()) || (i == len(parts)-1 && !fi.Mode().IsRegular()) {
			return nil, fs.ErrNotExist
		}
	}
	return os.ReadFile(cur)
}
