package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/orgdefaults"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// Where each setting a run of this checkout gets comes from: the workflow's inputs, the
// repository's studio.json, the organisation's defaults repository, or the studio's built-in
// default; and which role files are the repository's, the organisation's or built in. The same
// layering the action applies (policy.EffectiveSettings, bot/orgdefaults), so "why is the cap
// $20" has its answer before a run.

// settingsSource is where doctor reads the organisation's defaults from.
type settingsSource struct {
	// orgFlag is --org-defaults: "" (the workflow's org-defaults input, else <owner>/.github),
	// none, owner/name, or a folder holding a checkout of the defaults repository.
	orgFlag string
	// repo is --repo (owner/name); "" takes GITHUB_REPOSITORY, then the checkout's origin.
	repo   string
	getenv func(string) string
	stderr io.Writer
}

func settingsChecks(ctx context.Context, root string, src settingsSource) []check {
	var checks []check
	add := func(status, id, message, path string) { checks = append(checks, check{status, id, message, path}) }
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(policy.StudioConfigPath)))
	if err != nil {
		return nil // the project checks say what is missing
	}
	cfg, err := policy.ParseStudioConfig(data)
	if err != nil {
		return nil // ... and what is wrong
	}
	inputs, workflow := studioStepInputs(root)
	in, notes := settingInputs(inputs)
	for _, n := range notes {
		add("FAIL", "settings.inputs", n, workflow)
	}

	org, c := orgDefaultsOf(ctx, root, src, inputs["org-defaults"])
	if c.id != "" {
		checks = append(checks, c)
	}
	if org != nil {
		d, found, err := org.Defaults(ctx)
		switch {
		case err != nil:
			add("FAIL", "org.defaults", err.Error(), "")
		case !found:
			add("PASS", "org.defaults", fmt.Sprintf("%s has no %s (or this token cannot read it): the repository's files and the built-in defaults apply", org.Repo(), policy.OrgDefaultsPath), "")
		default:
			cfg.ApplyOrgDefaults(d, org.Where(policy.OrgDefaultsPath))
			add("PASS", "org.defaults", "read "+org.Where(policy.OrgDefaultsPath), "")
		}
	}
	for _, s := range policy.EffectiveSettings(cfg, in) {
		msg := fmt.Sprintf("%s from the %s", s.Value, s.Origin)
		if s.Origin == policy.FromBuiltIn {
			msg = s.Value + " (the built-in default)"
		} else if s.Where != "" {
			msg += " (" + s.Where + ")"
		}
		add("PASS", "settings."+s.Key, msg, "")
	}
	checks = append(checks, layeredFilesChecks(ctx, root, org)...)
	return checks
}

// orgDefaultsOf is the organisation's defaults doctor reads (nil: none to read) and the line that
// says why, when it reads none.
func orgDefaultsOf(ctx context.Context, root string, src settingsSource, input string) (*orgdefaults.Read, check) {
	v := strings.TrimSpace(src.orgFlag)
	if v == "" && !strings.Contains(input, "${{") {
		v = input
	}
	if v != "" && !strings.EqualFold(v, "none") {
		if st, err := os.Stat(v); err == nil && st.IsDir() {
			return orgdefaults.New(v, folderFiles(v)).ForEvent(nil), check{}
		}
	}
	repo := src.repo
	if repo == "" {
		repo = src.getenv("GITHUB_REPOSITORY")
	}
	if repo == "" {
		repo = originRepo(ctx, root)
	}
	owner, _, _ := strings.Cut(repo, "/")
	name, on, err := orgdefaults.RepoName(v, owner)
	switch {
	case err != nil:
		return nil, check{"FAIL", "org.defaults", err.Error(), ""}
	case !on && owner == "" && !strings.EqualFold(v, "none"):
		return nil, check{"SKIP", "org.defaults", "not read: the repository's owner is unknown (no GitHub origin); pass --repo owner/name or --org-defaults", ""}
	case !on:
		return nil, check{"SKIP", "org.defaults", "off (org-defaults: none): the repository's files and the built-in defaults apply", ""}
	}
	token := localToken(src.getenv)
	if token == "" {
		return nil, check{"SKIP", "org.defaults", fmt.Sprintf("not read: set GITHUB_TOKEN (or GH_TOKEN) to read %s, or pass --org-defaults with a checkout of it (or none); the lines below leave the organisation out", name), ""}
	}
	o, r, _ := strings.Cut(name, "/")
	client, err := hub.NewClient(githubHTTP(src.stderr), localAPIURL(src.getenv), token, o, r)
	if err != nil {
		return nil, check{"FAIL", "org.defaults", err.Error(), ""}
	}
	return orgdefaults.New(name, client).ForEvent(nil), check{}
}

// layeredFilesChecks say which role files and which customization file a run uses: the
// repository's own, the organisation's (for a file the repository lacks), or the built-in roles.
func layeredFilesChecks(ctx context.Context, root string, org *orgdefaults.Read) []check {
	own := map[string]bool{}
	entries, _ := os.ReadDir(filepath.Join(root, ".codex", "agents"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".toml") && e.Type().IsRegular() {
			own[e.Name()] = true
		}
	}
	var fromOrg []string
	var orgErr error
	if org != nil {
		names, err := org.Names(ctx, ".codex/agents")
		orgErr = err
		for _, n := range names {
			if strings.HasSuffix(n, ".toml") && !own[n] {
				fromOrg = append(fromOrg, strings.TrimSuffix(n, ".toml"))
			}
		}
	}
	var ownRoles []string
	for n := range own {
		ownRoles = append(ownRoles, strings.TrimSuffix(n, ".toml"))
	}
	slices.Sort(ownRoles)
	slices.Sort(fromOrg)
	msg := fmt.Sprintf("%s of the repository's own%s", roleFiles(len(ownRoles)), listed(ownRoles))
	if org != nil {
		msg += fmt.Sprintf("; %s from the organisation%s", roleFiles(len(fromOrg)), listed(fromOrg))
	}
	msg += "; every other role runs on the studio's built-in model and effort"
	checks := []check{{"PASS", "settings.roles", msg, ""}}
	if orgErr != nil {
		checks = append(checks, check{"FAIL", "settings.roles", orgErr.Error(), ""})
	}

	custom := "none: the built-in roles and workflows only"
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(prompts.CustomizationPath))); err == nil {
		custom = "the repository's own (" + prompts.CustomizationPath + ")"
	} else if org != nil {
		if _, err := org.File(ctx, prompts.CustomizationPath); err == nil {
			custom = "the organisation's (" + org.Where(prompts.CustomizationPath) + ")"
		} else if !errors.Is(err, hub.ErrNotFound) {
			return append(checks, check{"FAIL", "settings.customization", err.Error(), ""})
		}
	}
	return append(checks, check{"PASS", "settings.customization", custom, ""})
}

func roleFiles(n int) string {
	if n == 1 {
		return "1 role file"
	}
	return fmt.Sprintf("%d role files", n)
}

func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// settingInputs reads the workflow's inputs with the action's own parsers; a value the action
// would refuse is a note (the run would fail on it), an expression is left out (only the runner
// knows its value).
func settingInputs(inputs map[string]string) (policy.SettingInputs, []string) {
	input := func(name string) string {
		v := strings.TrimSpace(inputs[name])
		if strings.Contains(v, "${{") {
			return ""
		}
		return v
	}
	var in policy.SettingInputs
	var notes []string
	if a, err := approvalInputs(input); err != nil {
		notes = append(notes, err.Error())
	} else {
		in.RequiredApprovals = a.required
	}
	if m, err := modelInputs(input); err != nil {
		notes = append(notes, eachErrorText(err)...)
	} else {
		in.ModelTier, in.Caps = m.tier, m.caps
	}
	if n, err := networkInputs(input("network"), input("allow-hosts")); err != nil {
		notes = append(notes, err.Error())
	} else {
		in.NetworkMode, in.AllowHosts = n.mode, n.hosts
	}
	return in, notes
}

func eachErrorText(err error) []string {
	var out []string
	for _, e := range eachError(err) {
		out = append(out, e.Error())
	}
	return out
}

// studioStepInputs are the `with:` of the workflow step that uses the action (the first such
// step of the first such workflow, as workflowCheck finds it) and that workflow's path.
func studioStepInputs(root string) (map[string]string, string) {
	path, data := studioWorkflow(root)
	if path == "" {
		return nil, ""
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if yaml.Unmarshal(data, &wf) != nil {
		return nil, rel(root, path)
	}
	jobs := make([]string, 0, len(wf.Jobs))
	for name := range wf.Jobs {
		jobs = append(jobs, name)
	}
	slices.Sort(jobs)
	for _, name := range jobs {
		for _, s := range wf.Jobs[name].Steps {
			if actionUses.MatchString("uses: " + s.Uses) {
				return s.With, rel(root, path)
			}
		}
	}
	return nil, rel(root, path)
}

// githubRemote is owner/name in a GitHub remote URL (https, ssh or scp-like; any host, for
// Enterprise Server).
var githubRemote = regexp.MustCompile(`[:/]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`)

// originRepo is owner/name of the checkout's origin remote, "" when there is none.
func originRepo(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "remote", "get-url", "origin").Output()
	if err != nil {
		return ""
	}
	m := githubRemote.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return ""
	}
	return m[1] + "/" + m[2]
}

// folderFiles reads a local checkout of the defaults repository as orgdefaults reads GitHub.
type folderFiles string

func (f folderFiles) FileAtRef(_ context.Context, p, _ string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(string(f), filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", p, hub.ErrNotFound)
	}
	return data, err
}

func (f folderFiles) DirNames(_ context.Context, p, _ string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(string(f), filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", p, hub.ErrNotFound)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, err
}
