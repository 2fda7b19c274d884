package prompts

import (
	"strings"
	"testing"
)

func refFiles(reqs []ContextRequest, engine string) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, strings.TrimPrefix(r.SourcePath, "docs/engine-reference/"+engine+"/"))
	}
	return out
}

func TestEngineReferenceSelection(t *testing.T) {
	tests := []struct {
		name, engine, role, task string
		want, not                []string
	}{
		{"task keywords pick modules", "godot", "gameplay-programmer", "Implement rollback networking input sync",
			[]string{"VERSION.md", "current-best-practices.md", "gameplay.md", "modules/networking.md", "modules/input.md"}, []string{"modules/audio.md", "specialist.md"}},
		{"same-engine sub-specialist gets specialist and gameplay", "godot", "godot-shader-specialist", "Water shader",
			[]string{"specialist.md", "gameplay.md", "modules/rendering.md"}, []string{"plugins.md"}},
		{"GAS specialist always gets the GAS plugin", "unreal", "ue-gas-specialist", "Add a dash",
			[]string{"plugins/gas.md", "specialist.md"}, []string{"plugins/pcg.md"}},
		{"designers get no programming docs", "unity", "game-designer", "Tune the gamepad input",
			[]string{"VERSION.md", "modules/input.md"}, []string{"gameplay.md", "breaking-changes.md"}},
		{"keywords are case-insensitive", "unity", "qa-playtester", "Check DEPRECATED calls after the Upgrade",
			[]string{"deprecated-apis.md", "breaking-changes.md"}, []string{"gameplay.md"}},
		{"minimal role only required files", "unreal", "writer", "Write the network lobby barks",
			[]string{"VERSION.md", "current-best-practices.md"}, []string{"modules/networking.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := EngineReferenceRequests(tt.engine, tt.role, tt.task)
			got := refFiles(reqs, tt.engine)
			for _, w := range tt.want {
				if !contains(got, w) {
					t.Errorf("missing %s in %v", w, got)
				}
			}
			for _, n := range tt.not {
				if contains(got, n) {
					t.Errorf("unexpected %s in %v", n, got)
				}
			}
			for _, r := range reqs {
				if !strings.HasPrefix(r.SourcePath, "docs/engine-reference/"+tt.engine+"/") {
					t.Errorf("foreign engine doc %s", r.SourcePath)
				}
				if r.Required != (r.SourcePath == "docs/engine-reference/"+tt.engine+"/VERSION.md" || strings.HasSuffix(r.SourcePath, "/current-best-practices.md")) {
					t.Errorf("%s required = %v", r.SourcePath, r.Required)
				}
			}
		})
	}
	if got := EngineReferenceRequests("cryengine", "producer", ""); got != nil {
		t.Errorf("unknown engine: %v", got)
	}
}

func TestProjectClassName(t *testing.T) {
	for in, want := range map[string]string{"my cool game": "MyCoolGame", "3d-racer": "Game3dRacer", "!!": "Game", "Neon_Drift 2": "NeonDrift2"} {
		if got := ProjectClassName(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
	e, _ := LookupEngine("unreal")
	if got := e.ForProject("Neon Drift").ProjectFiles[0]; got != "src/NeonDrift.uproject" {
		t.Errorf("uproject = %q", got)
	}
}
