package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
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

// runDoctor checks a checkout the way the action will read it: the tools it needs and every
// studio file, with the same parsers the action uses, so a broken file is found before a run.
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "project root")
	codexPath := fs.String("codex-path", "", "the Codex CLI (default $CODEX_BIN, then codex on PATH)")
	codexEngine := fs.String("codex-engine", string(codex.EngineExec), "the codex-engine input to check (exec or app-server)")
	agentUser := fs.String("agent-user", jail.DefaultUser, "the agent-user input to check (auto, a name, a uid, or none)")
	agentSandbox := fs.String("agent-sandbox", string(jail.SandboxAuto), "the agent-sandbox input to check (auto, require or off)")
	agentMemory := fs.String("agent-memory", "", "the agent-memory input to check (a size such as 4GiB; default: 3/4 of what the studio may use, at most 8 GiB)")
	agentPids := fs.String("agent-pids", "", fmt.Sprintf("the agent-pids input to check (default %d)", jail.DefaultProcesses))
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

	// The project's files: the same checks as `studio validate`.
	checks = append(checks, validateProject(ctx, root)...)
	return printChecks(stdout, checks)
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
