package policy

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseStudioConfig(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"valid", `{"mode":"prototype","studioMode":"fast-prototype","engine":"godot"}`, ""},
		{"bad mode", `{"mode":"alpha","studioMode":"fast-prototype"}`, "studio.json mode must be design, prototype, or development"},
		{"missing mode", `{"studioMode":"fast-prototype"}`, "studio.json mode must be design, prototype, or development"},
		{"bad studio mode", `{"mode":"design","studioMode":"strict"}`, "studio.json studioMode must be fast-prototype, guided-studio, or strict-studio"},
		{"not json", `{mode:`, "studio.json is not valid JSON"},
		{"array", `[]`, "studio.json must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseStudioConfig([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil || cfg.StudioMode != ModeFastPrototype {
					t.Fatalf("cfg = %+v, err = %v", cfg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// One decode of studio.json gives every view the studio reads from it: what the prompts state of
// the project and the repository's spend caps ride on the configuration policy decoded.
func TestParseStudioConfigCarriesPromptFactsAndBudget(t *testing.T) {
	cfg, err := ParseStudioConfig([]byte(`{"mode":"prototype","studioMode":"guided-studio","name":"Jumper","slug":"jumper",
		"concept":"a jumping game","genre":"platformer","platform":"pc","audience":"kids","engine":"godot",
		"engineVersion":"4.3","currentMilestone":"M1","budget":{"maxCostPerDay":2.5,"maxCostPerMonth":40}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Slug != "jumper" || cfg.Concept != "a jumping game" || cfg.Genre != "platformer" || cfg.Platform != "pc" ||
		cfg.Audience != "kids" || cfg.EngineVersion != "4.3" || cfg.CurrentMilestone != "M1" {
		t.Errorf("prompt facts = %+v", cfg)
	}
	if cfg.Budget.PerDay != 2.5 || cfg.Budget.PerMonth != 40 {
		t.Errorf("budget = %+v, want 2.5 a day and 40 a month", cfg.Budget)
	}
}

// TestStudioConfigActive: only "active" (or no status at all) accepts mutating runs; the seed's
// "frozen" and "inactive", and anything else, do not, and the reason says how to resume.
func TestStudioConfigActive(t *testing.T) {
	for status, want := range map[string]bool{"": true, "active": true, " active ": true, "frozen": false, "inactive": false, "archived": false} {
		if got := (StudioConfig{Status: status}).Active(); got != want {
			t.Errorf("Active(%q) = %v, want %v", status, got, want)
		}
	}
	reason := StudioConfig{Status: "frozen"}.InactiveReason()
	for _, want := range []string{`"frozen"`, `"status": "active"`, "default branch", StudioConfigPath} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason lacks %q: %s", want, reason)
		}
	}
}

// What a person sees for each mistake in studio.json, as validate and the action print it: the
// place (line and column) of a JSON error, the expected type of a wrong value in the file's own
// words instead of Go's, and every unknown key with the known one it is probably a misspelling
// of. The texts are in testdata/golden/studio-config-errors.txt.
func TestStudioConfigErrorsSayWhereAndWhat(t *testing.T) {
	const valid = `"mode": "prototype", "studioMode": "guided-studio", "engine": "godot"`
	cases := []struct{ name, in string }{
		{"invalid JSON", "{\n  \"mode\": \"prototype\",\n  \"studioMode\": \"guided-studio\"\n  \"engine\": \"godot\"\n}\n"},
		{"cut short", "{\n  \"mode\": \"prototype\",\n"},
		{"schemaVersion as a string", "{\n  \"schemaVersion\": \"1\",\n  " + valid + "\n}\n"},
		{"roles as a string", "{" + valid + ", \"roles\": \"producer\"}"},
		{"not an object", "[]"},
		{"unknown keys", "{" + valid + ", \"studiomode\": \"x\", \"enigne\": \"godot\", \"flavour\": 1}"},
	}
	var b strings.Builder
	for _, c := range cases {
		_, err := ParseStudioConfig([]byte(c.in))
		fmt.Fprintf(&b, "## %s\n", c.name)
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		for _, p := range StudioConfigProblems([]byte(c.in)) {
			fmt.Fprintf(&b, "problem: %s\n", p)
		}
		b.WriteString("\n")
	}
	checkGolden(t, "studio-config-errors.txt", b.String())
	got := b.String()
	for _, want := range []string{"line 4, column 3", "ends at line 3 before its closing brace", "schemaVersion must be a number, not a string (line 2)", "\"enigne\"", "Did you mean \"engine\"?", "Did you mean \"studioMode\"?"} {
		if !strings.Contains(got, want) {
			t.Errorf("the texts lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Go struct") || strings.Contains(got, "json: cannot unmarshal") {
		t.Errorf("Go's own wording reaches the user:\n%s", got)
	}
	if p := StudioConfigProblems([]byte("{" + valid + ", \"budget\": {}, \"network\": {}}")); len(p) != 0 {
		t.Errorf("a file with only known keys has problems: %q", p)
	}
}
