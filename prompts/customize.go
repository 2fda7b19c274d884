package prompts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// CustomizationPath is where a project keeps its extend-only customization pack (seed §1.5).
const CustomizationPath = ".codex/studio/config.json"

// Customization is .codex/studio/config.json: project-local custom roles, workflows and templates.
type Customization struct {
	SchemaVersion int              `json:"schemaVersion"`
	Policy        CustomPolicy     `json:"policy"`
	Roles         []CustomRole     `json:"roles"`
	Workflows     []CustomWorkflow `json:"workflows"`
	Templates     []CustomTemplate `json:"templates"`
	// Prices override or add model prices (US dollars per million tokens) to the table the
	// binary ships (policy/spend), for the cost the studio shows and max-cost holds.
	Prices map[string]CustomPrice `json:"prices,omitempty"`
}

// CustomPrice is one model's price in the pack: input, cached input and output tokens, in US
// dollars per million.
type CustomPrice struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"`
}

// CustomPolicy says how a pack merges with built-ins; only "extend-only" exists.
type CustomPolicy struct {
	Merge string `json:"merge"`
}

// CustomRole is a project-defined role; its id starts with "custom-".
type CustomRole struct {
	ID              string   `json:"id"`
	DisplayName     string   `json:"displayName"`
	PromptFile      string   `json:"promptFile"`
	ContextStrategy string   `json:"contextStrategy"`
	ModelTier       string   `json:"modelTier"`
	Phase           string   `json:"phase"`
	ExpectedOutputs []string `json:"expectedOutputs"`
	ReviewChecklist []string `json:"reviewChecklist"`
	ContextFiles    []string `json:"contextFiles"`
}

// CustomWorkflow is a project-defined workflow, found by id or alias.
type CustomWorkflow struct {
	ID           string   `json:"id"`
	Role         string   `json:"role"`
	Phase        string   `json:"phase"`
	ModelTier    string   `json:"modelTier"`
	Objective    string   `json:"objective"`
	File         string   `json:"file"`
	ContextFiles []string `json:"contextFiles"`
	TemplateIDs  []string `json:"templateIds"`
	Aliases      []string `json:"aliases"`
}

// CustomTemplate is a project-defined document template.
type CustomTemplate struct {
	ID               string   `json:"id"`
	Category         string   `json:"category"`
	Path             string   `json:"path"`
	Description      string   `json:"description"`
	Roles            []string `json:"roles"`
	Workflows        []string `json:"workflows"`
	Tags             []string `json:"tags"`
	RequiredSections []string `json:"requiredSections"`
}

// DefaultCustomization is what a missing config file means.
func DefaultCustomization() Customization {
	return Customization{SchemaVersion: 1, Policy: CustomPolicy{Merge: "extend-only"}, Roles: []CustomRole{}, Workflows: []CustomWorkflow{}, Templates: []CustomTemplate{}}
}

// ReadCustomization reads and schema-checks root/.codex/studio/config.json. A missing file is the
// default pack; a file that does not parse or breaks the schema is an error naming the key.
func ReadCustomization(ctx context.Context, root string) (Customization, error) {
	if err := ctx.Err(); err != nil {
		return Customization{}, err
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(CustomizationPath)))
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultCustomization(), nil
	}
	if err != nil {
		return Customization{}, fmt.Errorf("read %s: %w", CustomizationPath, err)
	}
	return ParseCustomization(data)
}

// ParseCustomization decodes and schema-checks a customization pack, applying the seed's defaults.
// Unknown keys are errors: a misspelt key would otherwise silently drop a setting.
func ParseCustomization(data []byte) (Customization, error) {
	c := Customization{SchemaVersion: 1, Policy: CustomPolicy{Merge: "extend-only"}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Customization{}, fmt.Errorf("invalid studio customization config %s: %w", CustomizationPath, err)
	}
	if err := c.applyDefaultsAndCheck(); err != nil {
		return Customization{}, fmt.Errorf("invalid studio customization config %s: %w", CustomizationPath, err)
	}
	return c, nil
}

var (
	contextStrategies = []string{"minimal", "focused", "broad"}
	modelTiers        = []string{"sol", "terra", "luna"}
	customPhases      = []string{"plan", "implement", "review", "ship"} // no "fix": fix is derived
)

// applyDefaultsAndCheck fills the customization's defaults and checks every field, collecting all
// the mistakes into one error so a user fixes the file in one go. It is one function because its
// small checkers (req, enum, list) close over the error list every field adds to.
func (c *Customization) applyDefaultsAndCheck() error {
	if c.SchemaVersion != 1 {
		return fmt.Errorf("schemaVersion: must be 1")
	}
	if c.Policy.Merge != "extend-only" {
		return fmt.Errorf("policy.merge: must be \"extend-only\"")
	}
	var errs []error
	req := func(key, v string) {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("%s: must be a non-empty string", key))
		}
	}
	enum := func(key, v string, allowed []string) {
		if !contains(allowed, v) {
			errs = append(errs, fmt.Errorf("%s: must be one of %s", key, strings.Join(allowed, ", ")))
		}
	}
	list := func(key string, v []string, min int) {
		if len(v) < min {
			errs = append(errs, fmt.Errorf("%s: needs at least %d entry", key, min))
		}
		for i, s := range v {
			if strings.TrimSpace(s) == "" {
				errs = append(errs, fmt.Errorf("%s[%d]: must be a non-empty string", key, i))
			}
		}
	}
	for i := range c.Roles {
		r := &c.Roles[i]
		k := fmt.Sprintf("roles[%d].", i)
		req(k+"id", r.ID)
		req(k+"displayName", r.DisplayName)
		req(k+"promptFile", r.PromptFile)
		enum(k+"contextStrategy", r.ContextStrategy, contextStrategies)
		if r.ModelTier == "" {
			r.ModelTier = "terra"
		}
		enum(k+"modelTier", r.ModelTier, modelTiers)
		if r.Phase == "" {
			r.Phase = "plan"
		}
		enum(k+"phase", r.Phase, customPhases)
		list(k+"expectedOutputs", r.ExpectedOutputs, 1)
		list(k+"reviewChecklist", r.ReviewChecklist, 1)
		list(k+"contextFiles", r.ContextFiles, 0)
	}
	for i := range c.Workflows {
		w := &c.Workflows[i]
		k := fmt.Sprintf("workflows[%d].", i)
		req(k+"id", w.ID)
		req(k+"role", w.Role)
		enum(k+"phase", w.Phase, customPhases)
		if w.ModelTier == "" {
			w.ModelTier = "terra"
		}
		enum(k+"modelTier", w.ModelTier, modelTiers)
		req(k+"objective", w.Objective)
		req(k+"file", w.File)
		list(k+"contextFiles", w.ContextFiles, 0)
	}
	for i := range c.Templates {
		t := &c.Templates[i]
		k := fmt.Sprintf("templates[%d].", i)
		req(k+"id", t.ID)
		req(k+"category", t.Category)
		req(k+"path", t.Path)
		req(k+"description", t.Description)
		list(k+"roles", t.Roles, 1)
		list(k+"workflows", t.Workflows, 1)
	}
	for model, p := range c.Prices {
		if strings.TrimSpace(model) == "" {
			errs = append(errs, fmt.Errorf("prices: a model name must be non-empty"))
		}
		for key, v := range map[string]float64{"input": p.Input, "cachedInput": p.CachedInput, "output": p.Output} {
			if v < 0 || v != v || v > 1e6 {
				errs = append(errs, fmt.Errorf("prices.%s.%s: must be US dollars per million tokens, 0 or more", model, key))
			}
		}
	}
	return errors.Join(errs...)
}

// Diagnostic is one validation check, reported as `PASS|FAIL <id>: <message> (<path>)`.
type Diagnostic struct {
	ID      string
	OK      bool
	Message string
	Path    string
}

func (d Diagnostic) String() string {
	status := "PASS"
	if !d.OK {
		status = "FAIL"
	}
	return fmt.Sprintf("%s %s: %s (%s)", status, d.ID, d.Message, d.Path)
}

var customIDPattern = regexp.MustCompile(`^custom-[a-z0-9][a-z0-9-]*$`)

// ValidateCustomization checks a pack against the project (seed §1.5): id shape and collisions,
// duplicate ids, safe existing paths, template required sections and references between kinds.
// The built-in workflow registry, roles and templates are known here; extraBuiltinWorkflows adds
// ids the pack must not override either. A custom workflow's alias must not name a built-in
// workflow (by id or alias): FindWorkflow would never reach it. One diagnostic per item, plus
// codex.customization.config for the pack itself.
func ValidateCustomization(ctx context.Context, root string, c Customization, extraBuiltinWorkflows []string) ([]Diagnostic, error) {
	builtinWorkflows := append(BuiltinWorkflowIDs(), extraBuiltinWorkflows...)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("resolve project root %s: %w", root, err)
	}
	diags := []Diagnostic{{ID: "codex.customization.config", OK: true, Message: "customization config is valid", Path: CustomizationPath}}
	roleIDs, workflowIDs, templateIDs := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range c.Roles {
		roleIDs[r.ID]++
	}
	for _, w := range c.Workflows {
		workflowIDs[w.ID]++
	}
	for _, t := range c.Templates {
		templateIDs[t.ID]++
	}
	isBuiltin := func(id string) bool {
		return IsBuiltinRole(id) || IsBuiltinTemplate(id) || contains(builtinWorkflows, id)
	}
	checkID := func(id string, counts map[string]int) []string {
		var probs []string
		if isBuiltin(id) {
			probs = append(probs, fmt.Sprintf("%q is a built-in id; extend-only packs cannot override built-ins", id))
		} else if !customIDPattern.MatchString(id) {
			probs = append(probs, fmt.Sprintf("id %q must match %s", id, customIDPattern))
		}
		if counts[id] > 1 {
			probs = append(probs, fmt.Sprintf("id %q is defined %d times", id, counts[id]))
		}
		return probs
	}
	checkPath := func(key, p string, mustExist bool) []string {
		if msg := projectRelativePathProblem(realRoot, p, mustExist); msg != "" {
			return []string{key + " " + msg}
		}
		return nil
	}
	add := func(kind, id, path string, probs []string) {
		d := Diagnostic{ID: "codex.customization." + kind + "." + id, OK: len(probs) == 0, Path: path}
		if d.OK {
			d.Message = kind + " is valid"
		} else {
			d.Message = strings.Join(probs, "; ")
		}
		diags = append(diags, d)
	}
	knownRole := func(id string) bool { return IsBuiltinRole(id) || roleIDs[id] > 0 }
	knownWorkflow := func(id string) bool { return contains(builtinWorkflows, id) || workflowIDs[id] > 0 }
	for _, r := range c.Roles {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		probs := checkID(r.ID, roleIDs)
		probs = append(probs, checkPath("promptFile", r.PromptFile, true)...)
		for _, f := range r.ContextFiles {
			probs = append(probs, checkPath("contextFiles", f, false)...)
		}
		add("role", r.ID, r.PromptFile, probs)
	}
	for _, w := range c.Workflows {
		probs := checkID(w.ID, workflowIDs)
		probs = append(probs, checkPath("file", w.File, true)...)
		for _, f := range w.ContextFiles {
			probs = append(probs, checkPath("contextFiles", f, false)...)
		}
		if !knownRole(w.Role) {
			probs = append(probs, fmt.Sprintf("role %q is neither built-in nor a custom role", w.Role))
		}
		for _, a := range w.Aliases {
			if b, ok := lookupBuiltinWorkflow(a); ok {
				probs = append(probs, fmt.Sprintf("alias %q names the built-in workflow %s; extend-only packs cannot override built-ins", a, b.ID))
			}
		}
		for _, t := range w.TemplateIDs {
			if !IsBuiltinTemplate(t) && templateIDs[t] == 0 {
				probs = append(probs, fmt.Sprintf("template %q does not exist", t))
			}
		}
		add("workflow", w.ID, w.File, probs)
	}
	for _, t := range c.Templates {
		probs := checkID(t.ID, templateIDs)
		pathProbs := checkPath("path", t.Path, true)
		probs = append(probs, pathProbs...)
		for _, r := range t.Roles {
			if !knownRole(r) {
				probs = append(probs, fmt.Sprintf("role %q is neither built-in nor a custom role", r))
			}
		}
		for _, w := range t.Workflows {
			if !knownWorkflow(w) {
				probs = append(probs, fmt.Sprintf("workflow %q is neither built-in nor a custom workflow", w))
			}
		}
		if len(pathProbs) == 0 && len(t.RequiredSections) > 0 {
			body, err := os.ReadFile(filepath.Join(realRoot, filepath.FromSlash(t.Path)))
			if err != nil {
				probs = append(probs, fmt.Sprintf("path cannot be read: %v", err))
			} else {
				for _, s := range t.RequiredSections {
					if !hasNonEmptySection(string(body), s) {
						probs = append(probs, fmt.Sprintf("required section %q is missing or empty", s))
					}
				}
			}
		}
		add("template", t.ID, t.Path, probs)
	}
	for _, d := range diags[1:] {
		if !d.OK {
			diags[0].OK, diags[0].Message = false, "customization config has invalid entries"
			break
		}
	}
	return diags, nil
}

// projectRelativePathProblem returns "" when p is a safe project-relative path (seed §1.5
// projectRelativePath), or what is wrong with it.
func projectRelativePathProblem(realRoot, p string, mustExist bool) string {
	if controlCharPattern.MatchString(p) {
		return fmt.Sprintf("%q contains control characters", p)
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	if filepath.IsAbs(p) || strings.HasPrefix(slashed, "/") || windowsVolumePattern.MatchString(slashed) {
		return fmt.Sprintf("%q must be relative", p)
	}
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(slashed)))
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Sprintf("%q must stay inside the project root", p)
	}
	for _, seg := range strings.Split(clean, "/") {
		if strings.EqualFold(strings.TrimRight(seg, ". "), ".git") || gitShortNamePattern.MatchString(seg) {
			return fmt.Sprintf("%q must not point into .git", p)
		}
	}
	abs := filepath.Join(realRoot, filepath.FromSlash(clean))
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if mustExist {
			return fmt.Sprintf("%q does not exist", p)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("%q cannot be resolved: %v", p, err)
	}
	if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
		return fmt.Sprintf("%q resolves outside the project root", p)
	}
	return ""
}

// hasNonEmptySection reports whether heading (e.g. "# Purpose") appears as a line and is followed
// by at least one non-blank line before the next heading.
func hasNonEmptySection(body, heading string) bool {
	sc := bufio.NewScanner(strings.NewReader(body))
	in := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if strings.HasPrefix(line, "#") {
			if in {
				return false
			}
			in = line == strings.TrimSpace(heading)
			continue
		}
		if in && strings.TrimSpace(line) != "" {
			return true
		}
	}
	return false
}

// FindCustomRole returns the custom role with that id.
func (c Customization) FindCustomRole(id string) (CustomRole, bool) {
	for _, r := range c.Roles {
		if r.ID == id {
			return r, true
		}
	}
	return CustomRole{}, false
}

// FindCustomWorkflow returns the custom workflow whose id or one of whose aliases is name.
func (c Customization) FindCustomWorkflow(name string) (CustomWorkflow, bool) {
	for _, w := range c.Workflows {
		if w.ID == name || contains(w.Aliases, name) {
			return w, true
		}
	}
	return CustomWorkflow{}, false
}

// ResolveRoleID accepts a built-in role, or a custom role defined in c; anything else (including
// the legacy producer_agent, qa_agent and master_orchestrator) gets the unknown-role message.
func ResolveRoleID(c Customization, id string) (builtin bool, custom *CustomRole, err error) {
	if IsBuiltinRole(id) {
		return true, nil, nil
	}
	if r, ok := c.FindCustomRole(id); ok && customIDPattern.MatchString(id) {
		return false, &r, nil
	}
	return false, nil, errors.New(c.UnknownRoleMessage(id))
}
