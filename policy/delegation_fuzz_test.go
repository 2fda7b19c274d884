package policy

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzParseDelegation: a spawning role's answer is model output that files issues, so the parser
// never panics, and an answer it accepts keeps every bound the schema states (requests, lengths,
// literal safe paths each once, dependsOn only on earlier requests, ascending) and is a fixed
// point: written back as the schema's JSON, bare or in prose and a fence, it parses the same.
func FuzzParseDelegation(f *testing.F) {
	good := `{"role": "gameplay-programmer", "objective": "o", "writeFiles": ["a.go"], "files": [], "dependsOn": []}`
	for _, s := range []string{
		"Here is my answer:\n```json\n" + `{"summary": " Planned the jump. ", "delegate": [
	  {"role": "gameplay-programmer", "objective": "Add coyote time.\r\nKeep the jump height.", "writeFiles": ["./src/player/jump.gd", "src/player/jump.gd"], "files": ["docs/design.md"], "dependsOn": []},
	  {"role": "qa-playtester", "objective": "Playtest the jump.", "writeFiles": [], "files": [], "dependsOn": [0, 0]}
	]}` + "\n```",
		`{"summary": "Nothing to split.", "delegate": []}`,
		`{"summary": "s", "delegate": [` + good + `,` + strings.Replace(good, `"dependsOn": []`, `"dependsOn": [0, 0.0, 1e0]`, 1) + `]}`,
		`{"summary": "s", "delegate": [` + strings.Replace(good, `["a.go"]`, `[".GIT/config", "src/**", "../x", "a/"]`, 1) + `]}`,
		`{"summary": "s", "delegate": [` + strings.Replace(good, `"o"`, `"a\u0000b\u2028c\r"`, 1) + `]}`,
		`{"summary": null, "delegate": null}`,
		`{"summary": "s", "delegate": [{"role": "Lead Designer"}]}`,
		`{"summary": }`,
		`} {`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		d, err := ParseDelegation(answer)
		if err != nil {
			if !reflect.DeepEqual(d, Delegation{}) {
				t.Fatalf("an error (%v) with a delegation %+v", err, d)
			}
			return
		}
		if d.Summary != strings.TrimSpace(d.Summary) || utf8.RuneCountInString(d.Summary) > MaxDelegationSummary+1 {
			t.Fatalf("summary untrimmed or over %d runes: %q", MaxDelegationSummary, d.Summary)
		}
		if len(d.Delegate) > MaxDelegateRequests {
			t.Fatalf("%d requests, at most %d", len(d.Delegate), MaxDelegateRequests)
		}
		for i, r := range d.Delegate {
			if !roleIDShape.MatchString(r.Role) || utf8.RuneCountInString(r.Role) > MaxDelegateString {
				t.Fatalf("request %d: role %q is not a role id", i, r.Role)
			}
			if r.Objective == "" || r.Objective != strings.TrimSpace(r.Objective) || utf8.RuneCountInString(r.Objective) > MaxDelegateString ||
				strings.IndexFunc(r.Objective, func(c rune) bool { return unicode.IsControl(c) && c != '\n' && c != '\t' }) >= 0 {
				t.Fatalf("request %d: objective %q is empty, untrimmed, too long or holds control characters", i, r.Objective)
			}
			for _, paths := range [][]string{r.WriteFiles, r.Files} {
				if len(paths) > MaxDelegatePaths {
					t.Fatalf("request %d lists %d paths", i, len(paths))
				}
				for j, p := range paths {
					assertSafePath(t, p)
					if c, err := CleanLiteralPath(p, "path"); err != nil || c != p {
						t.Fatalf("request %d: path %q cleans to %q, %v", i, p, c, err)
					}
					if slices.Index(paths, p) != j {
						t.Fatalf("request %d lists %q twice", i, p)
					}
				}
			}
			for j, dep := range r.DependsOn {
				if dep < 0 || dep >= i || j > 0 && dep <= r.DependsOn[j-1] {
					t.Fatalf("request %d: dependsOn %v is not ascending earlier requests", i, r.DependsOn)
				}
			}
		}

		type request struct {
			Role       string   `json:"role"`
			Objective  string   `json:"objective"`
			WriteFiles []string `json:"writeFiles"`
			Files      []string `json:"files"`
			DependsOn  []int    `json:"dependsOn"`
		}
		doc := struct {
			Summary  string    `json:"summary"`
			Delegate []request `json:"delegate"`
		}{Summary: d.Summary, Delegate: []request{}}
		for _, r := range d.Delegate {
			doc.Delegate = append(doc.Delegate, request{r.Role, r.Objective, orEmpty(r.WriteFiles), orEmpty(r.Files), orEmpty(r.DependsOn)})
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, again := range []string{string(data), "My answer:\n```json\n" + string(data) + "\n```\n"} {
			if twice, err := ParseDelegation(again); err != nil || !reflect.DeepEqual(twice, d) {
				t.Fatalf("ParseDelegation(%s) = %+v, %v; want %+v", again, twice, err, d)
			}
		}
	})
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
