package policy

import (
	"strings"
	"testing"
)

func seedIdentity() ApprovalIdentity {
	return ApprovalIdentity{
		Role:           "gameplay-programmer",
		Objective:      "Implement jump feel",
		ApprovalScopes: []string{"source/**/*.ts"},
		ApprovedFiles:  []string{"design/gdd.md"},
		ProjectStage:   StagePrototype,
		StudioMode:     ModeGuidedStudio,
	}
}

// The seed's test vector (§4.3): if this changes, every approval ever given stops matching.
func TestObjectiveHashSeedVector(t *testing.T) {
	const (
		wantCanonical = `{"approvedFiles":["design/gdd.md"],"approvedGlobs":["source/**/*.ts"],"objective":"Implement jump feel","projectStage":"prototype","role":"gameplay-programmer","studioMode":"guided-studio"}`
		wantHash      = "f34166bf92a7ee5aba4fce81819d5951ddbf8a9fa652e6e82ef50e41949358ae"
	)
	canonical, err := CanonicalIdentity(seedIdentity())
	if err != nil || canonical != wantCanonical {
		t.Fatalf("canonical = %s, %v\nwant        %s", canonical, err, wantCanonical)
	}
	hash, err := ObjectiveHash(seedIdentity())
	if err != nil || hash != wantHash {
		t.Fatalf("hash = %s, %v; want %s", hash, err, wantHash)
	}
}

func TestObjectiveHashNormalizesRoleObjectiveAndScope(t *testing.T) {
	base, _ := ObjectiveHash(seedIdentity())
	same := []struct {
		name string
		edit func(*ApprovalIdentity)
	}{
		{"role case and space", func(id *ApprovalIdentity) { id.Role = "  Gameplay-Programmer\n" }},
		{"objective whitespace", func(id *ApprovalIdentity) { id.Objective = "\tImplement   jump\u00a0\nfeel  " }},
		{"scope spelling", func(id *ApprovalIdentity) { id.ApprovalScopes = []string{` source\**\*.ts `, "source/**/*.ts"} }},
		{"files spelling", func(id *ApprovalIdentity) { id.ApprovedFiles = []string{"./design/gdd.md"} }},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			id := seedIdentity()
			tt.edit(&id)
			if got, err := ObjectiveHash(id); err != nil || got != base {
				t.Fatalf("hash changed: %s, %v", got, err)
			}
		})
	}
	orderA := seedIdentity()
	orderA.ApprovalScopes = []string{"b/**", "a/**"}
	orderB := seedIdentity()
	orderB.ApprovalScopes = []string{"a/**", "b/**"}
	if a, b := mustHash(t, orderA), mustHash(t, orderB); a != b {
		t.Errorf("glob order changed the hash")
	}

	different := []struct {
		name string
		edit func(*ApprovalIdentity)
	}{
		{"studio mode", func(id *ApprovalIdentity) { id.StudioMode = ModeStrictStudio }},
		{"project stage", func(id *ApprovalIdentity) { id.ProjectStage = StageDevelopment }},
		{"role", func(id *ApprovalIdentity) { id.Role = "ui-programmer" }},
		{"objective", func(id *ApprovalIdentity) { id.Objective = "Implement jump feel better" }},
		{"scope", func(id *ApprovalIdentity) { id.ApprovalScopes = nil }},
		{"files", func(id *ApprovalIdentity) { id.ApprovedFiles = append(id.ApprovedFiles, "src/x.ts") }},
	}
	for _, tt := range different {
		t.Run(tt.name, func(t *testing.T) {
			id := seedIdentity()
			tt.edit(&id)
			if mustHash(t, id) == base {
				t.Fatalf("%s did not change the hash", tt.name)
			}
		})
	}
}

func mustHash(t *testing.T, id ApprovalIdentity) string {
	t.Helper()
	h, err := ObjectiveHash(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Go's encoding/json would escape these; JSON.stringify, which the seed hashes, does not.
func TestCanonicalIdentityEncodesLikeJSONStringify(t *testing.T) {
	id := seedIdentity()
	id.Objective = "Fix <a> & \"b\" \\ \x01"
	id.ApprovalScopes = nil
	id.ApprovedFiles = []string{"docs/a\u2028b.md"}
	got, err := CanonicalIdentity(id)
	want := `{"approvedFiles":["docs/a` + "\u2028" + `b.md"],"approvedGlobs":[],"objective":"Fix <a> & \"b\" \\ \u0001","projectStage":"prototype","role":"gameplay-programmer","studioMode":"guided-studio"}`
	if err != nil || got != want {
		t.Fatalf("got  %s, %v\nwant %s", got, err, want)
	}
}

func TestCanonicalIdentityRefusesInvalidInput(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ApprovalIdentity)
		want string
	}{
		{"no role", func(id *ApprovalIdentity) { id.Role = "  " }, "role is required"},
		{"bad stage", func(id *ApprovalIdentity) { id.ProjectStage = "" }, "project stage"},
		{"bad mode", func(id *ApprovalIdentity) { id.StudioMode = "yolo" }, "studio mode"},
		{"unsafe scope", func(id *ApprovalIdentity) { id.ApprovalScopes = []string{"../x"} }, "parent traversal"},
		{"unsafe file", func(id *ApprovalIdentity) { id.ApprovedFiles = []string{".env"} }, "secret-like"},
		{"invalid utf-8", func(id *ApprovalIdentity) { id.Objective = "a\xffb" }, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := seedIdentity()
			tt.edit(&id)
			if _, err := ObjectiveHash(id); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestTaskIdentityUsesTitleWriteFilesAndConfig(t *testing.T) {
	task := Task{WriteFiles: []string{"design/gdd.md"}, ApprovalScope: []string{"source/**/*.ts"}}
	cfg := StudioConfig{Mode: StagePrototype, StudioMode: ModeGuidedStudio}
	got := mustHash(t, TaskIdentity("gameplay-programmer", "Implement jump feel", task, cfg))
	if want := mustHash(t, seedIdentity()); got != want {
		t.Fatalf("task identity hash %s, want the seed vector %s", got, want)
	}
}

func TestIdentityMarkerRoundTrip(t *testing.T) {
	m := IdentityMarker{ObjectiveSHA256: strings.Repeat("ab", 32), Issue: 42, RequestedBy: "octo-cat"}
	line, err := m.Render()
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- studio:identity v1 sha256=" + strings.Repeat("ab", 32) + " issue=42 requested-by=octo-cat -->"; line != want {
		t.Fatalf("rendered %s", line)
	}
	got, err := ParseIdentityMarker(line + "\r\n## Plan\n\n<!-- studio:identity v1 sha256=" + strings.Repeat("cd", 32) + " issue=7 requested-by=mallory -->\n")
	if err != nil || got != m {
		t.Fatalf("parsed %+v, %v; want the first marker %+v", got, err, m)
	}
	app := IdentityMarker{ObjectiveSHA256: strings.Repeat("0", 64), Issue: 1, RequestedBy: "renovate[bot]"}
	if line, err := app.Render(); err != nil {
		t.Fatal(err)
	} else if got, err := ParseIdentityMarker("intro\n" + line); err != nil || got != app {
		t.Fatalf("parsed %+v, %v", got, err)
	}
}

func TestParseIdentityMarkerRefusesMalformed(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	good := "<!-- studio:identity v1 sha256=" + hash + " issue=42 requested-by=octocat -->"
	tests := []struct {
		name string
		body string
		want string
	}{
		{"none", "just a plan", "no studio identity marker"},
		{"upper-case hash", strings.Replace(good, hash, strings.ToUpper(hash), 1), "malformed"},
		{"short hash", strings.Replace(good, hash, hash[:63], 1), "malformed"},
		{"unknown version", strings.Replace(good, " v1 ", " v2 ", 1), "malformed"},
		{"issue zero", strings.Replace(good, "issue=42", "issue=0", 1), "malformed"},
		{"issue sign", strings.Replace(good, "issue=42", "issue=+42", 1), "malformed"},
		{"bad login", strings.Replace(good, "octocat", "octo--cat", 1), "malformed"},
		{"login with space", strings.Replace(good, "octocat", "octo cat", 1), "malformed"},
		{"extra field", strings.Replace(good, " -->", " approved=true -->", 1), "malformed"},
		{"trailing text", good + " hi", "malformed"},
		{"not at line start", "see " + good, "must start a line"},
		// The first marker decides: a good one after a broken one is not trusted instead.
		{"malformed first, good second", strings.Replace(good, "v1", "v0", 1) + "\n" + good, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := ParseIdentityMarker(tt.body); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseIdentityMarker = %+v, %v; want error containing %q", got, err, tt.want)
			}
		})
	}
	if _, err := (IdentityMarker{ObjectiveSHA256: "x", Issue: 1, RequestedBy: "a"}).Render(); err == nil {
		t.Error("Render accepted a marker it cannot parse")
	}
}

// Only the role keeps inner whitespace (the seed trims and lower-cases it, nothing more), so it is
// where JSON's short escapes show up.
func TestCanonicalIdentityShortEscapes(t *testing.T) {
	id := seedIdentity()
	id.Role = "Game\tplay\nprog\rrammer\b\x1f"
	got, err := CanonicalIdentity(id)
	if want := `"role":"game\tplay\nprog\rrammer\b\u001f"`; err != nil || !strings.Contains(got, want) {
		t.Fatalf("got %s, %v; want it to contain %s", got, err, want)
	}
}
