package prompts

import (
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestMentionedVerbs(t *testing.T) {
	got := MentionedVerbs("post `/studio run`, then /studio  steer or `/studio run --dry-run`; /studiox no")
	if want := []string{"run", "steer"}; !slices.Equal(got, want) {
		t.Errorf("MentionedVerbs = %v, want %v", got, want)
	}
	if got := UnknownVerbs("/studio pause and /studio help and /studio fly"); !slices.Equal(got, []string{"fly"}) {
		t.Errorf("UnknownVerbs = %v", got)
	}
}

// TestEmbeddedTextPromisesOnlyExistingVerbs reads every embedded role contract and template:
// none may tell an agent to use a /studio command the action does not have.
func TestEmbeddedTextPromisesOnlyExistingVerbs(t *testing.T) {
	for _, fsys := range []fs.FS{roleFiles, templateFiles} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			if bad := UnknownVerbs(string(data)); len(bad) > 0 {
				t.Errorf("%s mentions /studio %v, which the action does not have (it has %v)", p, bad, Verbs)
			}
			if strings.Contains(strings.ToLower(string(data)), "sub-issue") {
				t.Errorf("%s promises sub-issues, which the action does not file", p)
			}
			if m := actionFilesFollowUps.FindString(string(data)); m != "" {
				t.Errorf("%s promises %q: nothing files follow-up issues from a report (only a profile's delegation answer files child tasks)", p, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// actionFilesFollowUps is a sentence saying the action files follow-up work from a report.
var actionFilesFollowUps = regexp.MustCompile(`(?i)the action files[^.]*follow-up|follow-up issues? (is|are) filed|hand-offs become follow-up issues`)

// TestSharedGuidancePromisesNoFollowUpFiling checks the shared rules render.go adds to every
// contract, which live in Go, not in the embedded files.
func TestSharedGuidancePromisesNoFollowUpFiling(t *testing.T) {
	for id, text := range sharedFragments {
		if m := actionFilesFollowUps.FindString(text); m != "" || strings.Contains(text, "follow-up issue can be filed") {
			t.Errorf("shared rule %s promises the action files follow-ups: %q", id, text)
		}
	}
}

// TestRenderedPromptsPromiseOnlyExistingVerbs checks the golden prompts, which hold the text
// render.go adds around the contracts.
func TestRenderedPromptsPromiseOnlyExistingVerbs(t *testing.T) {
	goldens, err := fs.Glob(os.DirFS("testdata/golden"), "*.md")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden prompts: %v", err)
	}
	for _, g := range goldens {
		data, err := fs.ReadFile(os.DirFS("testdata/golden"), g)
		if err != nil {
			t.Fatal(err)
		}
		if bad := UnknownVerbs(string(data)); len(bad) > 0 {
			t.Errorf("testdata/golden/%s mentions /studio %v, which the action does not have", g, bad)
		}
		if strings.Contains(strings.ToLower(string(data)), "sub-issue") {
			t.Errorf("testdata/golden/%s promises sub-issues, which the action does not file", g)
		}
		if m := actionFilesFollowUps.FindString(string(data)); m != "" {
			t.Errorf("testdata/golden/%s promises %q, which nothing does", g, m)
		}
	}
}
