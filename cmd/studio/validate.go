package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/policy/suggest"
	"github.com/codex-studio/studio-action/prompts"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

const validateAbout = `Checks every studio file of a checkout with the parsers the action uses (the seed's project
validation): .codex/studio.json itself (JSON, types, known keys and engine), the customization
pack, the role files, AGENTS.md's sections, the context manifest when there is one, the profile.
One PASS, FAIL or SKIP line per check, then a line that names every failed one. Exit 1 when any
check fails.`

// runValidate is `studio validate`: the seed's project validation (§1.6), one
// `PASS|FAIL|SKIP <id>: <message> (<path>)` line per check, exit 1 when any fails. doctor runs the
// same checks after its tool checks.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio validate", flag.ContinueOnError)
	project := fs.String("project", ".", "project root")
	base := fs.String("base", "", "a git ref: also run the documentation-impact check against it (docs-impact)")
	if ok, code := parseFlags(fs, args, "studio validate [--project DIR] [--base REF]", validateAbout, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "studio validate: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	root, err := filepath.Abs(*project)
	if err != nil {
		fmt.Fprintf(stderr, "studio validate: %v\n", err)
		return exitError
	}
	checks := validateProject(ctx, root)
	if *base != "" {
		checks = append(checks, docsImpactChecks(ctx, root, *base)...)
	}
	return printChecks(stdout, "validate", checks)
}

// printChecks prints one line per check, then a last line that sums them up and names every
// failed one, so a failure on line 2 of 70 is not scrolled past.
func printChecks(stdout io.Writer, command string, checks []check) int {
	var failed []string
	counts := map[string]int{}
	for _, c := range checks {
		fmt.Fprintln(stdout, c)
		counts[c.status]++
		if c.status == "FAIL" && !slices.Contains(failed, c.id) {
			failed = append(failed, c.id)
		}
	}
	if len(failed) == 0 {
		fmt.Fprintf(stdout, "%s: no check failed (%d passed, %d skipped)\n", command, counts["PASS"], counts["SKIP"])
		return exitOK
	}
	noun := "checks"
	if counts["FAIL"] == 1 {
		noun = "check"
	}
	fmt.Fprintf(stdout, "%s: %d %s failed: %s\n", command, counts["FAIL"], noun, strings.Join(failed, ", "))
	return exitError
}

// agentsSections are the AGENTS.md sections the seed's validation requires, each non-empty
// (§1.6 item 9); `studio init` writes them all.
var agentsSections = []string{"Project Goal", "Engine", "Commands", "Context Bootstrap", "Model Routing", "Coding Conventions",
	"Asset Conventions", "Studio Roles", "Current Milestone", "Verification", "Rules"}

// forbiddenPaths are the seed's leftovers a studio project must not carry (§1.6 item 16): other
// tools' state that would confuse an agent reading the checkout.
var forbiddenPaths = []string{"CODEX.md", "project_orchestrator.md", ".gamestudio/runs", ".truthmark", ".codex/hooks.json"}

// validateProject checks every studio file of the checkout at root with the parsers the action
// uses. Unlike the seed, a missing or broken studio.json does not stop the checks: every broken
// file is named in one pass; only the checks that read studio.json's lists are left out.
func validateProject(ctx context.Context, root string) []check {
	var checks []check
	add := func(status, id, message, path string) { checks = append(checks, check{status, id, message, path}) }
	result := func(err error, id, ok, path string) {
		if err != nil {
			add("FAIL", id, err.Error(), path)
		} else {
			add("PASS", id, ok, path)
		}
	}

	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(policy.StudioConfigPath)))
	var cfg policy.StudioConfig
	cfgOK := false
	switch {
	case errors.Is(err, os.ErrNotExist):
		add("FAIL", "studio.config", "missing: there is no "+policy.StudioConfigPath+"; create it with `"+policy.InitCommand+"` (your own name, engine and mode)", policy.StudioConfigPath)
	case err != nil:
		add("FAIL", "studio.config", err.Error(), policy.StudioConfigPath)
	default:
		if cfg, err = policy.ParseStudioConfig(data); err != nil {
			add("FAIL", "studio.config", err.Error(), policy.StudioConfigPath)
		} else {
			cfgOK = true
			problems := studioConfigProblems(cfg, data)
			for _, p := range problems {
				add("FAIL", "studio.config", p, policy.StudioConfigPath)
			}
			if len(problems) == 0 {
				add("PASS", "studio.config", fmt.Sprintf("%s, %s, engine %s", cfg.Mode, cfg.StudioMode, orDefault(cfg.Engine, "unset")), policy.StudioConfigPath)
			}
		}
	}

	// The customization pack is optional: without it only the built-ins apply, which is said as
	// such rather than as a valid file that is not there.
	custom := prompts.DefaultCustomization()
	customPath := filepath.Join(root, filepath.FromSlash(prompts.CustomizationPath))
	if _, err := os.Lstat(customPath); errors.Is(err, os.ErrNotExist) {
		add("SKIP", "codex.customization.config", "no customization pack: only the built-in roles, workflows and templates", "")
	} else if c, err := prompts.ReadCustomization(ctx, root); err != nil {
		add("FAIL", "codex.customization.config", err.Error(), prompts.CustomizationPath)
	} else if diags, err := prompts.ValidateCustomization(ctx, root, c, nil); err != nil {
		add("FAIL", "codex.customization.config", err.Error(), prompts.CustomizationPath)
	} else {
		custom = c
		for _, d := range diags {
			status := "PASS"
			if !d.OK {
				status = "FAIL"
			}
			add(status, d.ID, d.Message, d.Path)
		}
	}

	if cfgOK {
		checks = append(checks, rosterChecks(cfg, custom)...)
	}
	checks = append(checks, agentsMDChecks(root)...)
	if cfgOK {
		checks = append(checks, starterChecks(root, cfg)...)
	}
	if cfgOK {
		checks = append(checks, contextManifestChecks(ctx, root)...)
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
		add("SKIP", "codex.agent", "no .codex/agents/*.toml: every role uses its built-in model and effort", "")
	}

	profilePath := filepath.Join(root, ".codex", "profile.json")
	if data, err := os.ReadFile(profilePath); errors.Is(err, os.ErrNotExist) {
		add("SKIP", "codex.profile", "no multi-agent profile", "")
	} else if err != nil {
		add("FAIL", "codex.profile", err.Error(), ".codex/profile.json")
	} else if p, err := guidance.ParseProfile(data); err != nil {
		result(err, "codex.profile", "", ".codex/profile.json")
	} else {
		add("PASS", "codex.profile", "the profile compiles", ".codex/profile.json")
		checks = append(checks, profileRoleCheck(root, p), profileBackendCheck(p), profileControlCheck(p))
	}

	for _, p := range forbiddenPaths {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			add("FAIL", "project.forbidden."+p, "another tool's file; a studio project must not carry it (remove it)", p)
		}
	}
	return checks
}

// studioConfigProblems are the mistakes a studio.json that parses can still hold, which the
// action would silently work around: unknown keys (policy.StudioConfigProblems) and an engine the
// studio has no roles or references for.
func studioConfigProblems(cfg policy.StudioConfig, data []byte) []string {
	problems := policy.StudioConfigProblems(data)
	if cfg.Engine != "" {
		if _, ok := prompts.LookupEngine(cfg.Engine); !ok {
			engines := []string{"godot", "unity", "unreal"}
			problems = append([]string{fmt.Sprintf("studio.json engine %q is not an engine the studio knows (godot, unity or unreal).%s",
				cfg.Engine, suggest.DidYouMean(suggest.Closest(cfg.Engine, engines)))}, problems...)
		}
	}
	return problems
}

// rosterChecks are the seed's codex.project.roles, activeRoles and workflows: studio.json's lists
// name only roles and workflows that exist. An absent list is the default (every role, every
// workflow) and passes as such.
func rosterChecks(cfg policy.StudioConfig, custom prompts.Customization) []check {
	var checks []check
	known := func(id string) bool {
		builtin, _, err := prompts.ResolveRoleID(custom, id)
		return err == nil || builtin
	}
	unknown := func(ids []string, ok func(string) bool) []string {
		var out []string
		for _, id := range ids {
			if !ok(id) {
				out = append(out, id)
			}
		}
		return out
	}
	switch bad := unknown(cfg.Roles, known); {
	case len(cfg.Roles) == 0:
		checks = append(checks, check{"SKIP", "codex.project.roles", "studio.json lists no roles: every built-in role applies", policy.StudioConfigPath})
	case len(bad) > 0:
		checks = append(checks, check{"FAIL", "codex.project.roles", "not studio roles: " + strings.Join(bad, ", "), policy.StudioConfigPath})
	default:
		checks = append(checks, check{"PASS", "codex.project.roles", fmt.Sprintf("%d roles", len(cfg.Roles)), policy.StudioConfigPath})
	}
	inRoles := func(id string) bool { return len(cfg.Roles) == 0 && known(id) || slices.Contains(cfg.Roles, id) }
	if bad := unknown(cfg.ActiveRoles, inRoles); len(bad) > 0 {
		checks = append(checks, check{"FAIL", "codex.project.activeRoles", "not among the project's roles: " + strings.Join(bad, ", "), policy.StudioConfigPath})
	} else if len(cfg.ActiveRoles) > 0 {
		checks = append(checks, check{"PASS", "codex.project.activeRoles", fmt.Sprintf("%d active roles", len(cfg.ActiveRoles)), policy.StudioConfigPath})
	}
	isWorkflow := func(id string) bool { _, ok := prompts.FindWorkflow(custom, id); return ok }
	if bad := unknown(cfg.Workflows, isWorkflow); len(bad) > 0 {
		checks = append(checks, check{"FAIL", "codex.project.workflows", "not workflows: " + strings.Join(bad, ", "), policy.StudioConfigPath})
	} else if len(cfg.Workflows) > 0 {
		checks = append(checks, check{"PASS", "codex.project.workflows", fmt.Sprintf("%d workflows", len(cfg.Workflows)), policy.StudioConfigPath})
	}
	return checks
}

// agentsMDChecks are codex.project.AGENTS.md.<section>: every section the seed requires is there
// and has text.
func agentsMDChecks(root string) []check {
	data, err := os.ReadFile(filepath.Join(root, "AGENTS.md"))
	if err != nil {
		return []check{{"FAIL", "codex.project.AGENTS.md", "missing: every prompt asks for AGENTS.md as required context; `studio init` writes one", "AGENTS.md"}}
	}
	body := map[string]string{}
	current := ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			current = strings.TrimSpace(h)
			body[current] += " " // present, possibly empty
			continue
		}
		if current != "" {
			body[current] += strings.TrimSpace(line)
		}
	}
	var checks []check
	for _, s := range agentsSections {
		id := "codex.project.AGENTS.md." + s
		switch text, ok := body[s]; {
		case !ok:
			checks = append(checks, check{"FAIL", id, "section `## " + s + "` is missing", "AGENTS.md"})
		case strings.TrimSpace(text) == "":
			checks = append(checks, check{"FAIL", id, "section `## " + s + "` is empty", "AGENTS.md"})
		default:
			checks = append(checks, check{"PASS", id, "present", "AGENTS.md"})
		}
	}
	return checks
}

// starterDocs are the seed's four starter documents (project.artifact.<file>), and
// timelineSections the headings production/timeline.md must keep (project.timeline.<section>):
// init writes them, and the prompts' context reads them.
var (
	starterDocs      = []string{"design/gdd.md", "production/timeline.md", "docs/architecture/README.md", "docs/market-overview.md"}
	timelineSections = []string{"Timeline", "Milestones", "Risks", "Next Validation Gate"}
)

// starterChecks are the seed's engine_reference.project.<engine>.<file>, project.artifact.<file>
// and project.timeline.<section>: the engine reference files the engine's roles are pointed at
// (AGENTS.md names them), the starter documents and the timeline's sections, each a non-empty
// regular file of the checkout. `studio init --full` writes every one of them; the default layout
// does without them (a run reads what is there), so an absent one is a SKIP, and only one that is
// there but empty, not a file, or a timeline without its headings fails.
func starterChecks(root string, cfg policy.StudioConfig) []check {
	var checks []check
	present := func(id, path string) bool {
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(path)))
		switch {
		case err != nil:
			checks = append(checks, check{"SKIP", id, "absent (`studio init --full` writes it; runs do without it)", path})
		case !info.Mode().IsRegular() || info.Size() == 0:
			checks = append(checks, check{"FAIL", id, "not a non-empty regular file", path})
		default:
			checks = append(checks, check{"PASS", id, "present", path})
			return true
		}
		return false
	}
	for _, p := range prompts.EngineReferenceFiles(cfg.Engine) {
		present("engine_reference.project."+cfg.Engine+"."+strings.TrimPrefix(p, "docs/engine-reference/"+cfg.Engine+"/"), p)
	}
	for _, p := range starterDocs {
		present("project.artifact."+p, p)
	}
	const timeline = "production/timeline.md"
	data, err := os.ReadFile(filepath.Join(root, timeline))
	if err != nil {
		return checks // its artifact check said so
	}
	headings := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			headings[strings.TrimSpace(h)] = true
		}
	}
	for _, s := range timelineSections {
		if headings[s] {
			checks = append(checks, check{"PASS", "project.timeline." + s, "present", timeline})
		} else {
			checks = append(checks, check{"FAIL", "project.timeline." + s, "heading `# " + s + "` is missing", timeline})
		}
	}
	return checks
}

// profileRoleCheck refuses a profile whose agent ids are not studio roles of the checkout: the
// action installs an agent's guidance only for the run of the role with that id, so such an
// agent can never apply.
func profileRoleCheck(root string, p *guidance.Profile) check {
	roles, err := roles.Load(roles.DiskFiles(root))
	if err != nil {
		return check{"FAIL", "codex.profile.agents", err.Error(), prompts.CustomizationPath}
	}
	var bad []string
	for id := range p.Agents {
		if _, ok := roles.Lookup(id); !ok {
			bad = append(bad, id)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return check{"FAIL", "codex.profile.agents", fmt.Sprintf("agents that are not studio roles, so their guidance can never apply: %s (name each agent after the role whose runs it guides)", strings.Join(bad, ", ")), ".codex/profile.json"}
	}
	return check{"PASS", "codex.profile.agents", fmt.Sprintf("%d agents, each a studio role", len(p.Agents)), ".codex/profile.json"}
}

// profileBackendCheck refuses a profile that lets a role spawn a child the action cannot run: the
// action has no native path (it does not run Codex native subagents), so a can_spawn edge to a
// role whose only backend is native, or any can_spawn edge under the native orchestration, is
// delegation that can never happen (policy.DecideDelegation refuses every such request).
func profileBackendCheck(p *guidance.Profile) check {
	var bad []string
	for _, id := range sortedAgentIDs(p) {
		for _, child := range p.Agents[id].CanSpawn {
			backends := p.Agents[child].Backends
			if p.Coordination.Orchestration == policy.OrchestrationNative || (len(backends) > 0 && !slices.Contains(backends, policy.BackendMCP)) {
				bad = append(bad, id+" -> "+child)
			}
		}
	}
	if len(bad) > 0 {
		return check{"FAIL", "codex.profile.backends", fmt.Sprintf("the action has no native path (it runs no Codex native subagents), so these can_spawn edges can never run: %s (give the child the `mcp` backend and a durable orchestration, or remove the edge)", strings.Join(bad, ", ")), ".codex/profile.json"}
	}
	return check{"PASS", "codex.profile.backends", "every child a role may request runs as a child task", ".codex/profile.json"}
}

// profileControlCheck refuses a control graph that grants actions no verb carries out (the seed's
// interrupt, fork, set_effort): the guidance says nobody can use them, and this says it before a
// run does.
func profileControlCheck(p *guidance.Profile) check {
	var bad []string
	for _, id := range sortedAgentIDs(p) {
		for _, act := range p.UncarriedControls(id) {
			bad = append(bad, id+": "+act)
		}
	}
	if len(bad) > 0 {
		return check{"FAIL", "codex.profile.controls", fmt.Sprintf("the control graph grants actions no command carries out: %s (the action carries out %s; remove the others)", strings.Join(bad, ", "), strings.Join(policy.ControlActions, ", ")), ".codex/profile.json"}
	}
	return check{"PASS", "codex.profile.controls", "every control the graph grants is a command", ".codex/profile.json"}
}

func sortedAgentIDs(p *guidance.Profile) []string {
	ids := make([]string, 0, len(p.Agents))
	for id := range p.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// contextManifestChecks are the seed's codex.project.context_manifest, .meta and .freshness: a
// manifest, when there is one, equals the one refresh-context would write now, byte for byte, and
// its meta's hashes match. Without one there is nothing to be stale (runs never read it).
func contextManifestChecks(ctx context.Context, root string) []check {
	const id = "codex.project.context_manifest"
	have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(prompts.ContextManifestPath)))
	if errors.Is(err, os.ErrNotExist) {
		return []check{{"SKIP", id, "no context manifest: runs select their context afresh; `studio refresh-context` writes one", ""}}
	}
	if err != nil {
		return []check{{"FAIL", id, err.Error(), prompts.ContextManifestPath}}
	}
	project, err := prompts.LoadProject(ctx, root)
	if err != nil {
		return []check{{"FAIL", id, err.Error(), policy.StudioConfigPath}}
	}
	want, wantMeta, err := prompts.BuildContextManifest(ctx, root, project)
	if err != nil {
		return []check{{"FAIL", id, err.Error(), prompts.ContextManifestPath}}
	}
	var m prompts.ContextManifest
	checks := []check{}
	if err := json.Unmarshal(have, &m); err != nil || m.SchemaVersion != 1 {
		checks = append(checks, check{"FAIL", id, fmt.Sprintf("not a schemaVersion 1 manifest (%v); run `studio refresh-context`", err), prompts.ContextManifestPath})
	} else {
		checks = append(checks, check{"PASS", id, fmt.Sprintf("%d entries", len(m.Entries)), prompts.ContextManifestPath})
	}
	haveMeta, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(prompts.ContextManifestMetaPath)))
	switch {
	case err != nil:
		checks = append(checks, check{"FAIL", id + ".meta", "missing: run `studio refresh-context`", prompts.ContextManifestMetaPath})
	case string(haveMeta) != string(wantMeta) && !strings.Contains(string(haveMeta), sha256Of(have)):
		checks = append(checks, check{"FAIL", id + ".meta", "its manifestSha256 is not the manifest's; run `studio refresh-context`", prompts.ContextManifestMetaPath})
	default:
		checks = append(checks, check{"PASS", id + ".meta", "hashes match the manifest", prompts.ContextManifestMetaPath})
	}
	if string(have) == string(want) && string(haveMeta) == string(wantMeta) {
		checks = append(checks, check{"PASS", id + ".freshness", "the manifest is what the project selects now", prompts.ContextManifestPath})
	} else {
		checks = append(checks, check{"FAIL", id + ".freshness", "stale: the project now selects other context; run `studio refresh-context`", prompts.ContextManifestPath})
	}
	return checks
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
