package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/jail"
)

// check is one doctor line: PASS, FAIL or SKIP, an id, what was found and where.
type check struct {
	status, id, message, path string
}

func (c check) String() string {
	s := fmt.Sprintf("%s %s: %s", c.status, c.id, c.message)
	if c.path != "" {
		s += " (" + c.path + ")"
	}
	return s
}

const doctorAbout = `Checks a checkout the way the action will read it: the tools (git; a local Codex CLI, which only
local runs need), the agent's containment on this machine, the workflow that runs the action and
how it pins it, where each setting a run gets comes from (the workflow's inputs, the repository's
.codex/studio.json, the organisation's defaults in <owner>/.github, or the built-in default), and
every studio file with the action's own parsers (what validate checks). One PASS, FAIL or SKIP
line per check, then a line that names every failed one. Exit 1 when any check fails.`

// runDoctor checks a checkout the way the action will read it: the tools it needs and every
// studio file, with the same parsers the action uses, so a broken file is found before a run.
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio doctor", flag.ContinueOnError)
	project := fs.String("project", ".", "project root")
	codexPath := fs.String("codex-path", "", "the Codex CLI (default $CODEX_BIN, then codex on PATH)")
	codexEngine := fs.String("codex-engine", string(codex.EngineAppServer), "the codex-engine input to check (app-server or exec)")
	agentUser := fs.String("agent-user", jail.DefaultUser, "the agent-user input to check (auto, a name, a uid, or none)")
	agentSandbox := fs.String("agent-sandbox", string(jail.SandboxAuto), "the agent-sandbox input to check (auto, require or off)")
	agentMemory := fs.String("agent-memory", "", "the agent-memory input to check (a size such as 4GiB; default: 3/4 of what the studio may use, at most 8 GiB)")
	agentPids := fs.String("agent-pids", "", fmt.Sprintf("the agent-pids input to check (default %d)", jail.DefaultProcesses))
	orgDefaults := fs.String("org-defaults", "", "the organisation's defaults to read: owner/name, a folder holding a checkout of it, or none (default: the workflow's org-defaults input, else <owner>/.github, read with GITHUB_TOKEN or GH_TOKEN)")
	repo := fs.String("repo", "", "the repository, owner/name (default GITHUB_REPOSITORY, else the origin remote): whose owner's .github holds the defaults")
	if ok, code := parseFlags(fs, args, "studio doctor [flags]", doctorAbout, stdout, stderr); !ok {
		return code
	}
	root, err := filepath.Abs(*project)
	if err != nil {
		fmt.Fprintf(stderr, "studio doctor: %v\n", err)
		return exitError
	}
	var checks []check
	add := func(status, id, message, path string) { checks = append(checks, check{status, id, message, path}) }
	if out, err := exec.CommandContext(ctx, "git", "--version").Output(); err != nil {
		add("FAIL", "tool.git", "git is not on PATH; the action commits and pushes with the git CLI", "")
	} else {
		add("PASS", "tool.git", strings.TrimSpace(string(out)), "")
	}
	bin := codex.ResolveBin(*codexPath, getenv)
	if v, err := codex.Available(ctx, bin); err != nil {
		// Only local runs need it: on the runner the action installs the pinned one itself.
		add("SKIP", "tool.codex", "no local Codex CLI: the action installs the pinned one on the runner; a local `studio run` needs it ("+err.Error()+"; install it with `"+codex.InstallCommand+"` or pass --codex-path)", bin)
	} else if err := codex.CheckVersion(v); err != nil {
		add("FAIL", "tool.codex", err.Error()+"; install the pinned one with `"+codex.InstallCommand+"` or pass --codex-path", bin)
	} else {
		add("PASS", "tool.codex", strings.TrimSpace(v), bin)
		add(appServerCheck(ctx, bin, *codexEngine))
	}

	// Containment: what the action would do here, layer by layer. The sandbox is probed for real
	// on this checkout's filesystem; a fallback or an unconfined agent is not a failure (a
	// developer's machine is rarely root) but is said plainly; nothing is created or kept.
	mode, err := jail.ParseSandbox(*agentSandbox)
	memory, merr := jail.ParseMemory(*agentMemory)
	pids, perr := jail.ParseProcesses(*agentPids)
	if err == nil {
		err = errors.Join(merr, perr)
	}
	switch {
	case err != nil:
		add("FAIL", "containment", err.Error(), "")
	case strings.EqualFold(strings.TrimSpace(*agentUser), "none"):
		add("SKIP", "containment", "unconfined: agent-user is none, so the agent would run as the studio's own user", "")
	default:
		opts := jail.Options{User: strings.TrimSpace(*agentUser), Sandbox: mode, ProbePIDNamespace: true, Workspace: root, Hide: hiddenPlaces(getenv), Memory: memory, Processes: pids}
		if n, err := strconv.Atoi(opts.User); err == nil {
			opts.User, opts.UID = "", n
		}
		st, err := jail.Inspect(ctx, opts)
		switch {
		case err != nil:
			add("FAIL", "containment", err.Error(), "")
		case st.Mode == jail.ModeSandbox:
			add("PASS", "containment", st.String(), "")
		case st.Confined:
			add("SKIP", "containment", "fallback: "+st.String(), "")
		default:
			add("SKIP", "containment", st.String(), "")
		}
		for _, l := range st.Layers {
			status, msg := "PASS", l.Name
			if !l.Active {
				status = "SKIP"
			}
			if l.Note != "" {
				msg += ": " + l.Note
			}
			add(status, "containment."+l.ID, msg, "")
		}
	}

	checks = append(checks, workflowCheck(root))
	checks = append(checks, settingsChecks(ctx, root, settingsSource{orgFlag: *orgDefaults, repo: *repo, getenv: getenv, stderr: stderr})...)
	// The project's files: the same checks as `studio validate`.
	checks = append(checks, validateProject(ctx, root)...)
	return printChecks(stdout, "doctor", checks)
}

// actionUses finds a step's `uses: codex-studio/studio-action@<ref>` in a workflow file.
var actionUses = regexp.MustCompile(`(?m)^\s*(?:-\s*)?uses:\s*["']?codex-studio/studio-action@([^\s"'#]+)`)

var (
	releaseRef = regexp.MustCompile(`^v\d+(\.\d+){0,2}$`)
	commitRef  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// workflowCheck finds the workflow that runs the action and says how it pins it: a release tag
// or a commit SHA installs a checked binary, a branch builds from source on the runner (which
// needs Go, and moves with every push). A workflow that does not listen to issue comments never
// sees `/studio run`.
func workflowCheck(root string) check {
	const id = "workflow"
	if f, data := studioWorkflow(root); f != "" {
		m := actionUses.FindSubmatch(data)
		ref := string(m[1])
		kind := "a branch: built from source on the runner, which needs Go; pin a release tag such as @v1 or a commit SHA"
		switch {
		case releaseRef.MatchString(ref):
			kind = "a release tag"
		case commitRef.MatchString(ref):
			kind = "a commit SHA"
		}
		msg := fmt.Sprintf("%s runs codex-studio/studio-action@%s (%s)", rel(root, f), ref, kind)
		if !strings.Contains(string(data), "issue_comment") {
			return check{"FAIL", id, msg + ", but not on issue_comment: a `/studio run` comment never starts it", rel(root, f)}
		}
		return check{"PASS", id, msg + " on issue comments", ""}
	}
	return check{"FAIL", id, "no workflow under .github/workflows uses codex-studio/studio-action; `studio init` writes .github/workflows/studio.yml", ""}
}

// studioWorkflow is the first workflow under .github/workflows that uses the action, and its
// bytes; "" when none does.
func studioWorkflow(root string) (string, []byte) {
	var files []string
	for _, pattern := range []string{"*.yml", "*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", pattern))
		files = append(files, m...)
	}
	slices.Sort(files)
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && actionUses.Match(data) {
			return f, data
		}
	}
	return "", nil
}

// appServerCheck says whether the Codex CLI answers as an app server (the codex-engine
// app-server's way to drive it). It fails only when that engine is the one to check: with exec,
// a Codex without it still runs every call.
func appServerCheck(ctx context.Context, bin, engineInput string) (status, id, message, path string) {
	engine, err := codex.ParseEngine(engineInput)
	if err != nil {
		return "FAIL", "tool.codex.app-server", err.Error(), ""
	}
	agent, err := codex.AppServerAvailable(ctx, bin)
	switch {
	case err == nil:
		return "PASS", "tool.codex.app-server", "`codex app-server` answers (" + agent + ")", bin
	case engine == codex.EngineAppServer:
		return "FAIL", "tool.codex.app-server", err.Error() + "; codex-engine: app-server needs it: install the pinned Codex with `" + codex.InstallCommand + "` or pass --codex-path, or use codex-engine: exec", bin
	default:
		return "SKIP", "tool.codex.app-server", err.Error() + "; only codex-engine: app-server needs it (install the pinned Codex with `" + codex.InstallCommand + "`)", bin
	}
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}
