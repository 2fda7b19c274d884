package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// studioState is `.codex/studio.json` in the seed's key order (§1.2), so files written here and
// by the original runtime diff cleanly.
type studioState struct {
	SchemaVersion    int      `json:"schemaVersion"`
	Product          string   `json:"product"`
	Name             string   `json:"name"`
	Slug             string   `json:"slug"`
	Concept          string   `json:"concept"`
	Genre            string   `json:"genre"`
	Platform         string   `json:"platform"`
	Audience         string   `json:"audience"`
	Competitors      []string `json:"competitors"`
	Monetization     string   `json:"monetization"`
	Timeline         string   `json:"timeline"`
	Engine           string   `json:"engine"`
	EngineVersion    string   `json:"engineVersion"`
	Mode             string   `json:"mode"`
	StudioMode       string   `json:"studioMode"`
	Phase            string   `json:"phase"`
	Status           string   `json:"status"`
	CurrentMilestone string   `json:"currentMilestone"`
	Roles            []string `json:"roles"`
	ActiveRoles      []string `json:"activeRoles"`
	Workflows        []string `json:"workflows"`
}

var (
	engineAliases = map[string]string{
		"godot": "godot", "godot engine": "godot",
		"unity": "unity", "unity engine": "unity", "unity3d": "unity",
		"unreal": "unreal", "unreal engine": "unreal", "ue": "unreal", "ue5": "unreal", "ue4": "unreal",
	}
	engineVersions = map[string]string{"godot": "4.4.1", "unity": "6000.0", "unreal": "5.4"}
	nonSlug        = regexp.MustCompile(`[^a-z0-9]+`)
)

// runInit writes `.codex/studio.json` in a checkout, as the seed's `init` does for project state
// (starter documents and engine files are the project's own business here).
func runInit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "project name")
	engineArg := fs.String("engine", "", "godot, unity or unreal")
	mode := fs.String("mode", "", "project stage: design, prototype or development")
	studioMode := fs.String("studio-mode", "guided-studio", "fast-prototype, guided-studio or strict-studio")
	nonInteractive := fs.Bool("non-interactive", false, "required: init asks nothing")
	force := fs.Bool("force-refresh", false, "replace the state of a project with another name")
	project := fs.String("project", ".", "project root")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fail := func(msg string) int { fmt.Fprintln(stderr, "studio init: "+msg); return exitError }
	switch {
	case !*nonInteractive:
		return fail("init requires --non-interactive")
	case *mode == "":
		return fail("init requires --mode")
	case strings.TrimSpace(*name) == "":
		return fail("init requires --name")
	}
	engine, ok := engineAliases[strings.ToLower(strings.TrimSpace(*engineArg))]
	if !ok {
		return fail(fmt.Sprintf("Unknown engine %q. Expected one of: godot, unity, unreal", *engineArg))
	}
	if !policy.ValidStage(policy.ProjectStage(*mode)) {
		return fail("studio.json mode must be design, prototype, or development")
	}
	if !policy.ValidMode(policy.StudioMode(*studioMode)) {
		return fail("studio.json studioMode must be fast-prototype, guided-studio, or strict-studio")
	}
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(*name), "-"), "-")
	if slug == "" {
		return fail(fmt.Sprintf("project name %q has no letters or digits to make a slug from", *name))
	}
	path := filepath.Join(*project, filepath.FromSlash(policy.StudioConfigPath))
	if existing, err := os.ReadFile(path); err == nil {
		var prev struct{ Name string }
		if json.Unmarshal(existing, &prev) == nil && prev.Name != *name && !*force {
			return fail(fmt.Sprintf("Project root already contains %s; pass --force-refresh to reinitialize", prev.Name))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err.Error())
	}
	milestone := "prototype"
	if *mode == "design" || *mode == "development" {
		milestone = *mode
	}
	state := studioState{
		SchemaVersion: 1, Product: "codex-game-studio", Name: *name, Slug: slug, Concept: *name + " concept",
		Genre: "Unspecified", Platform: "PC", Audience: "General players", Competitors: []string{}, Monetization: "undecided",
		Timeline: "TBD", Engine: engine, EngineVersion: engineVersions[engine], Mode: *mode, StudioMode: *studioMode,
		Phase: "Initialization", Status: "active", CurrentMilestone: milestone,
		Roles: prompts.RolesForEngine(engine), ActiveRoles: prompts.ActiveRolesFor(*mode, engine), Workflows: []string{},
	}
	data, _ := json.MarshalIndent(state, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fail(err.Error())
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fail(err.Error())
	}
	fmt.Fprintf(stdout, "wrote %s (%s, %s, %s); commit it on the default branch\n", path, engine, *mode, *studioMode)
	return exitOK
}
