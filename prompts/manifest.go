package prompts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/codex-studio/studio-action/policy"
)

// The seed's context manifest (§5.8): what the studio's default context requests select, written
// by `studio refresh-context` and checked for freshness by `studio validate`. As in the seed (its
// quirk A.15) runs never read it: each run selects its context afresh. It records what a run
// starts from, in a file a reviewer can diff.

// ContextManifestPath and ContextManifestMetaPath are where the manifest and its hashes live.
const (
	ContextManifestPath     = ".codex/context-manifest.json"
	ContextManifestMetaPath = ".codex/context-manifest.meta.json"
)

// manifestProduct names the product in the manifest, as the seed's does.
const manifestProduct = "codex-studio-action"

// ContextManifest is the manifest file.
type ContextManifest struct {
	SchemaVersion int            `json:"schemaVersion"`
	Product       string         `json:"product"`
	ProjectStage  string         `json:"projectStage"`
	StudioMode    string         `json:"studioMode"`
	Entries       []ContextEntry `json:"entries"`
	Budget        BudgetUse      `json:"budget"`
}

// ContextManifestMeta is the meta file: the manifest's hash and the hash of what it was built from.
type ContextManifestMeta struct {
	SchemaVersion  int    `json:"schemaVersion"`
	Product        string `json:"product"`
	ProjectStage   string `json:"projectStage"`
	StudioMode     string `json:"studioMode"`
	ManifestSHA256 string `json:"manifestSha256"`
	InputsSHA256   string `json:"inputsSha256"`
}

// BuildContextManifest selects the studio's default context in root and returns the manifest and
// meta files' bytes: two-space indented JSON and a newline, the manifest hashed byte for byte,
// the inputs hashed as key-sorted compact JSON (the seed's stableHash).
func BuildContextManifest(ctx context.Context, root string, p policy.StudioConfig) (manifest, meta []byte, err error) {
	reqs := StudioContextRequests(p.Engine)
	sel, err := SelectContext(ctx, root, reqs, DefaultBudget())
	if err != nil {
		return nil, nil, err
	}
	m := ContextManifest{SchemaVersion: 1, Product: manifestProduct, ProjectStage: string(p.Mode), StudioMode: string(p.StudioMode), Entries: sel.Entries, Budget: sel.Budget}
	if manifest, err = indentJSON(m); err != nil {
		return nil, nil, err
	}
	requests := make([]map[string]any, len(reqs))
	for i, r := range reqs {
		requests[i] = map[string]any{"sourcePath": r.SourcePath, "reason": r.Reason, "required": r.Required}
	}
	inputs, err := json.Marshal(map[string]any{ // maps marshal with sorted keys
		"projectStage": string(p.Mode), "studioMode": string(p.StudioMode), "engine": p.Engine, "engineVersion": p.EngineVersion, "slug": p.Slug, "requests": requests,
	})
	if err != nil {
		return nil, nil, err
	}
	meta, err = indentJSON(ContextManifestMeta{SchemaVersion: 1, Product: manifestProduct, ProjectStage: string(p.Mode), StudioMode: string(p.StudioMode),
		ManifestSHA256: sha256Hex(manifest), InputsSHA256: sha256Hex(inputs)})
	return manifest, meta, err
}

func indentJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as JSON.stringify writes <, > and &
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
