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
	"sort"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/prompts"
	"github.com/codex-studio/studio-action/prompts/guidance"
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

// runDoctor checks a checkout the way the action will read it: the tools it needs and every
// studio file, with the same parsers the action uses, so a broken file is found before a run.
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "project root")
	codexPath := fs.String("codex-path", "", "the Codex CLI (default $CODEX_BIN, then codex on PATH)")
	agentUser := fs.String("agent-user", jail.DefaultUser, "the agent-user input to check (auto, a name, a uid, or none)")
	agentSandbox := fs.String("agent-sandbox", string(jail.SandboxAuto), "the agent-sandbox input to check (auto, require or off)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	root, err := filepath.Abs(*project)
	if err != nil {
		fmt.Fprintf(stderr, "studio doctor: %v\n", err)
		return exitError
	}
	var checks []check
	add := func(status, id, message, path string) { checks = append(checks, check{status, id, message, path}) }
	result := func(err error, id, ok, path string) {
		if err != nil {
			add("FAIL", id, err.Error(), path)
		} else {
			add("PASS", id, ok, path)
		}
	}

	if out, err := exec.CommandContext(ctx, "git", "--version").Output(); err != nil {
		add("FAIL", "tool.git", "git is not on PATH; the action commits and pushes with the git CLI", "")
	} else {
		add("PASS", "tool.git", strings.TrimSpace(string(out)), "")
	}
	bin := codex.ResolveBin(*codexPath, getenv)
	if v, err := codex.Available(ctx, bin); err != nil {
		add("FAIL", "tool.codex", err.Error()+"; install it with `"+codex.InstallCommand+"` or pass --codex-path", bin)
	} else if err := codex.CheckVersion(v); err != nil {
		add("FAIL", "tool.codex", err.Error()+"; install the pinned one with `"+codex.InstallCommand+"` or pass --codex-path", bin)
	} else {
		add("PASS", "tool.codex", strings.TrimSpace(v), bin)
	}

	// Containment: what the action would do here, layer by layer. The sandbox is probed for real
	// on this checkout's filesystem; a fallback or an unconfined agent is not a failure (a
	// developer's machine is rarely root) but is said plainly; nothing is created or kept.
	mode, err := jail.ParseSandbox(*agentSandbox)
	switch {
	case err != nil:
		add("FAIL", "containment", err.Error(), "")
	case strings.EqualFold(strings.TrimSpace(*agentUser), "none"):
		add("SKIP", "containment", "unconfined: agent-user is none, so the agent would run as the studio's own user", "")
	default:
		opts := jail.Options{User: strings.TrimSpace(*agentUser), Sandbox: mode, ProbePIDNamespace: true, Workspace: root, Hide: hiddenPlaces(getenv)}
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

	studioPath := filepath.Join(root, filepath.FromSlash(policy.StudioConfigPath))
	data, err := os.ReadFile(studioPath)
	var cfg policy.StudioConfig
	switch {
	case errors.Is(err, os.ErrNotExist):
		add("FAIL", "studio.config", "missing: there is no "+policy.StudioConfigPath+"; create it with `"+policy.InitCommand+"` (your own name, engine and mode)", policy.StudioConfigPath)
	case err != nil:
		add("FAIL", "studio.config", err.Error(), policy.StudioConfigPath)
	default:
		cfg, err = policy.ParseStudioConfig(data)
		result(err, "studio.config", fmt.Sprintf("%s, %s, engine %s", cfg.Mode, cfg.StudioMode, orDefault(cfg.Engine, "unset")), policy.StudioConfigPath)
	}

	// The customization pack is optional: without it only the built-ins apply, which is said as
	// such rather than as a valid file that is not there.
	customPath := filepath.Join(root, filepath.FromSlash(prompts.CustomizationPath))
	if _, err := os.Lstat(customPath); errors.Is(err, os.ErrNotExist) {
		add("SKIP", "codex.customization.config", "no customization pack: only the built-in roles, workflows and templates", "")
	} else if custom, err := prompts.ReadCustomization(ctx, root); err != nil {
		add("FAIL", "codex.customization.config", err.Error(), prompts.CustomizationPath)
	} else if diags, err := prompts.ValidateCustomization(ctx, root, custom, nil); err != nil {
		add("FAIL", "codex.customization.config", err.Error(), prompts.CustomizationPath)
	} else {
		for _, d := range diags {
			status := "PASS"
			if !d.OK {
				status = "FAIL"
			}
			add(status, d.ID, d.Message, d.Path)
		}
	}

	agents, _ := filepath.Glob(filepath.Join(root, ".codex", "agents", "*.toml"))
	sort.Strings(agents)
	for _, p := range agents {
		role := strings.TrimSuffix(filepath.Base(p), ".toml")
		id := "codex.agent." + role
		data, err := os.ReadFile(p)
		if err == nil {
			var surface routing.ModelChoice
			if surface, err = routing.ParseRoleSurface(role, data); err == nil {
				add("PASS", id, fmt.Sprintf("%s (%s)", surface.Model, surface.Effort), rel(root, p))
				continue
			}
		}
		var se *routing.SurfaceError
		if errors.As(err, &se) {
			add("FAIL", id, err.Error(), "") // it starts with the file and line
			continue
		}
		add("FAIL", id, err.Error(), rel(root, p))
	}
	if len(agents) == 0 {
		add("SKIP", "codex.agent", "no .codex/agents/*.toml: every role uses its tier's default model", "")
	}

	profilePath := filepath.Join(root, ".codex", "profile.json")
	if data, err := os.ReadFile(profilePath); errors.Is(err, os.ErrNotExist) {
		add("SKIP", "codex.profile", "no multi-agent profile", "")
	} else if err != nil {
		add("FAIL", "codex.profile", err.Error(), ".codex/profile.json")
	} else {
		_, err := guidance.ParseProfile(data)
		result(err, "codex.profile", "the profile compiles", ".codex/profile.json")
	}

	failed := false
	for _, c := range checks {
		fmt.Fprintln(stdout, c)
		failed = failed || c.status == "FAIL"
	}
	if failed {
		return exitError
	}
	return exitOK
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}
