package prompts

import (
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// templateFiles are the built-in document templates inlined into prompts when selected.
//
//go:embed templates/*.md
var templateFiles embed.FS

// builtinTemplateIDs lists the embedded templates; a test keeps it equal to the directory.
var builtinTemplateIDs = []string{
	"accessibility_audit", "analytics_setup", "architecture_decision", "art_brief", "audio_brief",
	"bug_report", "design_doc", "economy_model", "engine_setup", "game_feel_tuning", "handoff",
	"level_brief", "live_ops_event", "localization_plan", "market_analysis", "narrative_brief",
	"performance_report", "playtest_report", "project_config", "release_notes", "security_review",
	"ship_check", "test_plan", "ui_ux_review",
}

// IsBuiltinTemplate reports whether id names an embedded template.
func IsBuiltinTemplate(id string) bool {
	i := sort.SearchStrings(builtinTemplateIDs, id)
	return i < len(builtinTemplateIDs) && builtinTemplateIDs[i] == id
}

// roleDefaultTemplates are always selected for their role (seed §6.2).
var roleDefaultTemplates = map[string][]string{
	"market-analyst":     {"market_analysis"},
	"data-scientist":     {"analytics_setup"},
	"game-feel-designer": {"game_feel_tuning"},
	"ui-ux-designer":     {"ui_ux_review"},
	"qa-playtester":      {"playtest_report"},
	"release-manager":    {"ship_check"},
}

// templateKeywordRules map task wording to templates. Patterns use word boundaries so "init"
// does not fire inside "definitely", unlike a bare substring.
var templateKeywordRules = []struct {
	pattern   *regexp.Regexp
	templates []string
}{
	{regexp.MustCompile(`\b(handoff|hand-off|hand off|coordination|coordinate)\b`), []string{"handoff"}},
	{regexp.MustCompile(`\b(engine setup|setup|set up|project config|initiali[sz]e|init)\b`), []string{"engine_setup", "project_config"}},
	{regexp.MustCompile(`\b(bug|crash|regression|defect)s?\b`), []string{"bug_report"}},
	{regexp.MustCompile(`\b(playtest|play test|qa pass)\b`), []string{"playtest_report"}},
	{regexp.MustCompile(`\b(gdd|design doc|mechanic|ruleset)s?\b`), []string{"design_doc"}},
	{regexp.MustCompile(`\b(level|encounter|layout)s?\b`), []string{"level_brief"}},
	{regexp.MustCompile(`\b(economy|currency|currencies|pricing|sink|loot)\b`), []string{"economy_model"}},
	{regexp.MustCompile(`\b(story|dialogue|narrative|quest|cutscene)s?\b`), []string{"narrative_brief"}},
	{regexp.MustCompile(`\b(performance|frame time|fps|profil(e|ing)|memory budget|optimi[sz]e)\b`), []string{"performance_report"}},
	{regexp.MustCompile(`\b(accessibility|a11y|colou?r ?blind|subtitles?|remapp?ing)\b`), []string{"accessibility_audit"}},
	{regexp.MustCompile(`\b(locali[sz]ation|translation|l10n|i18n|locale)s?\b`), []string{"localization_plan"}},
	{regexp.MustCompile(`\b(architecture|adr|technical decision)s?\b`), []string{"architecture_decision"}},
	{regexp.MustCompile(`\b(security|exploit|cheat|vulnerabilit(y|ies)|secret)s?\b`), []string{"security_review"}},
	{regexp.MustCompile(`\b(release notes?|patch notes?|changelog)\b`), []string{"release_notes"}},
	{regexp.MustCompile(`\b(ship|launch|release candidate|go/no-go)\b`), []string{"ship_check"}},
	{regexp.MustCompile(`\b(live ?ops|seasonal|event calendar|battle pass)\b`), []string{"live_ops_event"}},
	{regexp.MustCompile(`\b(art brief|concept art|sprite|texture|model sheet|art style)s?\b`), []string{"art_brief"}},
	{regexp.MustCompile(`\b(sfx|sound effect|audio cue|music cue)s?\b`), []string{"audio_brief"}},
	{regexp.MustCompile(`\b(test plan|test cases?|test suite)\b`), []string{"test_plan"}},
	{regexp.MustCompile(`\b(analytics|telemetry|metrics?|kpi)s?\b`), []string{"analytics_setup"}},
	{regexp.MustCompile(`\b(market|competitor|positioning)s?\b`), []string{"market_analysis"}},
	{regexp.MustCompile(`\b(game ?feel|juice|responsiveness|screen shake)\b`), []string{"game_feel_tuning"}},
	{regexp.MustCompile(`\b(ux|usability|user flow|wireframe)s?\b`), []string{"ui_ux_review"}},
}

// SelectedTemplate is a template chosen for a prompt, with its body.
type SelectedTemplate struct {
	ID     string
	Source string // "package:templates/<id>.md" or "project:<path>"
	Body   string
}

// SelectBuiltinTemplates returns the built-in template ids for role and task: role defaults first,
// then keyword matches in table order, without duplicates. Custom roles get no built-in
// templates, as in the seed.
func SelectBuiltinTemplates(role, task string) []string {
	var ids []string
	add := func(id string) {
		if !contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if !IsBuiltinRole(role) {
		return nil
	}
	for _, id := range roleDefaultTemplates[role] {
		add(id)
	}
	lower := strings.ToLower(task)
	for _, rule := range templateKeywordRules {
		if rule.pattern.MatchString(lower) {
			for _, id := range rule.templates {
				add(id)
			}
		}
	}
	return ids
}

// BuiltinTemplate returns the embedded body of a built-in template.
func BuiltinTemplate(id string) (SelectedTemplate, error) {
	if !IsBuiltinTemplate(id) {
		return SelectedTemplate{}, fmt.Errorf("unknown template %q", id)
	}
	b, err := templateFiles.ReadFile("templates/" + id + ".md")
	if err != nil {
		return SelectedTemplate{}, fmt.Errorf("read template %s: %w", id, err)
	}
	return SelectedTemplate{ID: id, Source: "package:templates/" + id + ".md", Body: string(b)}, nil
}

// SelectCustomTemplates picks project templates for role and task: a template is selected when its
// roles include the role or one of its tags is a substring of the lower-cased task (seed §1.5).
// The seed applies this to custom roles; built-in roles get it too, since a project template
// listing a built-in role in its roles says exactly that it wants to be used by that role.
func SelectCustomTemplates(c Customization, role, task string) []CustomTemplate {
	lower := strings.ToLower(task)
	var out []CustomTemplate
	for _, t := range c.Templates {
		match := contains(t.Roles, role)
		for _, tag := range t.Tags {
			if tag != "" && strings.Contains(lower, strings.ToLower(tag)) {
				match = true
			}
		}
		if match {
			out = append(out, t)
		}
	}
	return out
}
