// Package orgdefaults reads an organisation's defaults repository (`<owner>/.github` unless the
// `org-defaults` input names another): its settings file, policy.OrgDefaultsPath, and the role
// and customization files that stand in for a repository that has none of its own. What the
// settings mean and how they layer under the repository's own is policy's
// (policy.StudioConfig.ApplyOrgDefaults); this package only finds and reads the files, once per
// event, in as few requests as it can: one folder listing says whether there is anything to read
// at all, so a repository whose organisation keeps no defaults pays one request an event.
package orgdefaults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// files is what reading the defaults repository's default branch asks of GitHub (a hub.Client
// for that repository: hub.Client.InRepo).
type files interface {
	FileAtRef(ctx context.Context, path, ref string) ([]byte, error)
	DirNames(ctx context.Context, path, ref string) ([]string, error)
}

// Repo is an organisation's defaults repository.
type Repo struct {
	// Name is owner/name, as the texts show it.
	Name  string
	files files
}

// New is the defaults repository name (owner/name), read through f.
func New(name string, f files) *Repo { return &Repo{Name: name, files: f} }

// RepoName is the defaults repository the `org-defaults` input names for a repository of owner:
// "" takes `<owner>/.github`, "none" (or "false", "off") turns the defaults off (ok false), and
// anything else must be owner/name.
func RepoName(input, owner string) (name string, ok bool, err error) {
	v := strings.TrimSpace(input)
	switch strings.ToLower(v) {
	case "":
		if owner == "" {
			return "", false, nil
		}
		return owner + "/" + policy.DefaultOrgRepo, true, nil
	case "none", "false", "off":
		return "", false, nil
	}
	o, r, found := strings.Cut(v, "/")
	if !found || o == "" || r == "" || strings.ContainsAny(r, "/ ") || strings.ContainsAny(o, " ") {
		return "", false, fmt.Errorf("org-defaults %q must be owner/name (a repository), or none", v)
	}
	return v, true, nil
}

// Layered reports whether the organisation's copy of a repository file stands in when the
// repository has none: a role file (its model and effort) or the customization file (custom
// roles, workflows, prices). The project file and the profile are the repository's alone.
func Layered(p string) bool {
	if p == prompts.CustomizationPath {
		return true
	}
	name, ok := strings.CutPrefix(p, ".codex/agents/")
	return ok && strings.HasSuffix(name, ".toml") && !strings.Contains(name, "/")
}

// Read is one event's reads of the defaults repository: each file at most once, so an event
// sees one version of them (a long-lived server reads them afresh for its next event).
type Read struct {
	repo *Repo
	// logf warns of a defaults repository the token may not read (nil: silent).
	logf func(format string, args ...any)

	mu      sync.Mutex
	listing []string          // the names in `.codex` (codexNames)
	listed  bool              // listing was asked
	read    map[string][]byte // path -> bytes; nil is absent
	used    []string          // the layered files this event took from the organisation
}

// ForEvent starts an event's reads; a nil Repo reads nothing.
func (r *Repo) ForEvent(logf func(format string, args ...any)) *Read {
	return &Read{repo: r, logf: logf, read: map[string][]byte{}}
}

// Where is how the texts name a file of the defaults repository.
func (r *Read) Where(p string) string { return r.repo.Name + " " + p }

// Repo is the defaults repository's name (owner/name, or a folder `studio doctor` was given).
func (r *Read) Repo() string { return r.repo.Name }

// Names lists a folder under `.codex` of the defaults repository (none when it is absent), for
// `studio doctor`'s account of which role files are whose.
func (r *Read) Names(ctx context.Context, dir string) ([]string, error) {
	rest, ok := strings.CutPrefix(dir, codexDir+"/")
	if !ok {
		return nil, fmt.Errorf("orgdefaults: %s is not under %s", dir, codexDir)
	}
	top, err := r.codexNames(ctx)
	if err != nil || !slices.Contains(top, strings.Split(rest, "/")[0]) {
		return nil, err
	}
	names, err := r.repo.files.DirNames(ctx, dir, "")
	if err != nil && !r.absent(err) {
		return nil, fmt.Errorf("read the organisation's defaults: %w", err)
	}
	return names, nil
}

// Defaults are the organisation's settings; found is false when it keeps none (or the token
// cannot see them). An unusable file is an error of its own (policy's message, and where).
func (r *Read) Defaults(ctx context.Context) (d policy.OrgDefaults, found bool, err error) {
	data, err := r.File(ctx, policy.OrgDefaultsPath)
	if errors.Is(err, hub.ErrNotFound) {
		return d, false, nil
	}
	if err != nil {
		return d, false, err
	}
	if d, err = policy.ParseOrgDefaults(data); err != nil {
		return d, false, &UnusableError{Where: r.Where(policy.OrgDefaultsPath), Err: err}
	}
	return d, true, nil
}

// UnusableError is a defaults file the studio cannot apply: the runs of every repository that
// takes it refuse, and say where to mend it.
type UnusableError struct {
	Where string
	Err   error
}

func (e *UnusableError) Error() string {
	return fmt.Sprintf("the organisation's defaults (%s) cannot be used: %v. Mend the file on that repository's default branch, or set the action's `org-defaults: none` to run without them", e.Where, e.Err)
}

func (e *UnusableError) Unwrap() error { return e.Err }

// File reads one file of the defaults repository's default branch; hub.ErrNotFound when it is
// absent. The `.codex` folder is listed first (once an event): when it is absent, or lacks the
// file or its folder, nothing more is asked, so an organisation without defaults costs one
// request an event.
func (r *Read) File(ctx context.Context, p string) ([]byte, error) {
	if r == nil || r.repo == nil {
		return nil, hub.ErrNotFound
	}
	if rest, ok := strings.CutPrefix(p, codexDir+"/"); ok {
		names, err := r.codexNames(ctx)
		if err != nil {
			return nil, err
		}
		first, _, _ := strings.Cut(rest, "/")
		if !slices.Contains(names, first) {
			return nil, hub.ErrNotFound
		}
	}
	r.mu.Lock()
	data, ok := r.read[p]
	r.mu.Unlock()
	if !ok {
		var err error
		data, err = r.repo.files.FileAtRef(ctx, p, "")
		if err != nil && !r.absent(err) {
			return nil, fmt.Errorf("read the organisation's defaults: %w", err)
		}
		r.mu.Lock()
		r.read[p] = data
		r.mu.Unlock()
	}
	if data == nil {
		return nil, hub.ErrNotFound
	}
	return slices.Clone(data), nil
}

// Layered is File for a repository file the repository does not have (Layered paths only), and
// records that the event took it from the organisation.
func (r *Read) Layered(ctx context.Context, p string) ([]byte, error) {
	if !Layered(p) {
		return nil, hub.ErrNotFound
	}
	data, err := r.File(ctx, p)
	if err == nil {
		r.mu.Lock()
		if !slices.Contains(r.used, p) {
			r.used = append(r.used, p)
		}
		r.mu.Unlock()
	}
	return data, err
}

// Used are the files this event took from the organisation, in the order it took them.
func (r *Read) Used() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.used)
}

// codexDir is the folder every file of the defaults lives under.
const codexDir = ".codex"

// codexNames lists the defaults repository's `.codex` folder (empty when it has none).
func (r *Read) codexNames(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	names, ok := r.listing, r.listed
	r.mu.Unlock()
	if ok {
		return names, nil
	}
	names, err := r.repo.files.DirNames(ctx, codexDir, "")
	if err != nil && !r.absent(err) {
		return nil, fmt.Errorf("read the organisation's defaults: %w", err)
	}
	r.mu.Lock()
	r.listing, r.listed = names, true
	r.mu.Unlock()
	return names, nil
}

// absent: the repository, folder or file is not there for this token. GitHub answers 404 for a
// private repository the token cannot see, so "none" and "not yours" read the same; a 403 (an
// App not installed on it) is said once in the log, since the defaults then silently do not
// apply.
func (r *Read) absent(err error) bool {
	if errors.Is(err, hub.ErrNotFound) {
		return true
	}
	if errors.Is(err, hub.ErrForbidden) {
		if r.logf != nil {
			r.logf("::warning::the token cannot read the organisation's defaults in %s (%v); runs go on without them", r.repo.Name, err)
		}
		return true
	}
	return false
}
