package codex

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The studio writes evidence and reads what Codex left in paths an agent may have prepared: a
// symbolic link planted at one of them would make the studio (root in the Docker action) write
// agent-chosen text wherever the link points, or read a file the agent cannot. These helpers never
// follow a link in the last path component (O_NOFOLLOW) and only touch regular files; a link in
// the way of a write is replaced, not followed, and directories are created one component at a
// time, replacing a link or a file found in the way.

// openNoFollow opens path with flag|O_NOFOLLOW after checking what is there. With O_CREATE a
// symbolic link, FIFO or other non-regular file found at path is removed (unlink never follows a
// link) and a new file created exclusively; without it, such a path is refused. The opened file
// is checked again.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if flag&os.O_CREATE == 0 {
			return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("replace %s (%s): %w", path, fi.Mode().Type(), err)
		}
		flag |= os.O_EXCL
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", path)
		}
		return nil, err
	}
	return f, nil
}

// writeFileNoFollow is os.WriteFile that refuses to follow a symbolic link at path.
func writeFileNoFollow(path string, data []byte, perm fs.FileMode) error {
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// readFileNoFollow reads at most max bytes of path, refusing a symbolic link or a non-regular
// file; truncated reports that the file was longer.
func readFileNoFollow(path string, max int64) (data []byte, truncated bool, err error) {
	f, err := openNoFollow(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if int64(len(data)) > max {
		return data[:max], true, err
	}
	return data, false, err
}

// mkdirNoFollow makes base/rel a real directory, component by component below base, replacing a
// symbolic link (or anything else that is not a directory) found in the way. base itself is
// created with MkdirAll and must be trusted.
func mkdirNoFollow(base, rel string) (string, error) {
	if err := ensureDir(base, true); err != nil {
		return "", err
	}
	dir := base
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			return "", fmt.Errorf("%s leaves %s", rel, base)
		}
		dir = filepath.Join(dir, part)
		if err := ensureDir(dir, false); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ensureDir makes dir a real directory (0755): created when missing, replaced when it is a link
// or a file. With all, missing parents are created too.
func ensureDir(dir string, all bool) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("replace %s (%s) with a directory: %w", dir, fi.Mode().Type(), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if all {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Mkdir refuses an existing path, link or not; check what is there now.
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
