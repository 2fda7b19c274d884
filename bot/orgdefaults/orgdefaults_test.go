package orgdefaults

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
)

// repoFiles is a defaults repository on a map, counting what is asked of it.
type repoFiles struct {
	files    map[string]string
	asked    []string
	failWith error // every request fails so
}

func (f *repoFiles) FileAtRef(_ context.Context, p, ref string) ([]byte, error) {
	f.asked = append(f.asked, "file "+p)
	if f.failWith != nil {
		return nil, f.failWith
	}
	if d, ok := f.files[p]; ok && ref == "" {
		return []byte(d), nil
	}
	return nil, hub.ErrNotFound
}

func (f *repoFiles) DirNames(_ context.Context, dir, ref string) ([]string, error) {
	f.asked = append(f.asked, "dir "+dir)
	if f.failWith != nil {
		return nil, f.failWith
	}
	seen := map[string]bool{}
	var names []string
	for p := range f.files {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			if !seen[first] {
				seen[first] = true
				names = append(names, first)
			}
		}
	}
	if names == nil {
		return nil, hub.ErrNotFound
	}
	return names, nil
}

func TestAnOrganisationWithoutDefaultsCostsOneRequestAnEvent(t *testing.T) {
	t.Parallel()
	f := &repoFiles{files: map[string]string{"README.md": "hi"}}
	r := New("acme/.github", f).ForEvent(nil)
	ctx := context.Background()
	if _, found, err := r.Defaults(ctx); found || err != nil {
		t.Fatalf("found %v, %v", found, err)
	}
	for _, p := range []string{".codex/agents/gameplay-programmer.toml", ".codex/studio/config.json"} {
		if _, err := r.Layered(ctx, p); !errors.Is(err, hub.ErrNotFound) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if len(f.asked) != 1 || f.asked[0] != "dir .codex" {
		t.Fatalf("asked %v, want only the one listing", f.asked)
	}
	if len(r.Used()) != 0 {
		t.Fatal(r.Used())
	}
}

func TestDefaultsAndLayeredFilesAreReadOnceAnEvent(t *testing.T) {
	t.Parallel()
	f := &repoFiles{files: map[string]string{
		".codex/studio-defaults.json":            `{"requiredApprovals": 2, "budget": {"maxCostPerDay": 20}}`,
		".codex/agents/gameplay-programmer.toml": "model = \"gpt-5.6-luna\"\n",
		".codex/profile.json":                    "{}",
	}}
	r := New("acme/.github", f).ForEvent(nil)
	ctx := context.Background()
	for range 2 {
		d, found, err := r.Defaults(ctx)
		if !found || err != nil || d.RequiredApprovals != 2 || d.Budget.PerDay != 20 {
			t.Fatalf("%+v %v %v", d, found, err)
		}
		if data, err := r.Layered(ctx, ".codex/agents/gameplay-programmer.toml"); err != nil || !strings.Contains(string(data), "luna") {
			t.Fatalf("%q %v", data, err)
		}
	}
	// The studio folder is not in the listing: nothing is asked for the customization file.
	if _, err := r.Layered(ctx, ".codex/studio/config.json"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatal(err)
	}
	// The profile is the repository's alone, even where the organisation has one.
	if _, err := r.Layered(ctx, ".codex/profile.json"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatal(err)
	}
	if got := strings.Join(f.asked, ", "); got != "dir .codex, file .codex/studio-defaults.json, file .codex/agents/gameplay-programmer.toml" {
		t.Fatalf("asked: %s", got)
	}
	if got := r.Used(); len(got) != 1 || got[0] != ".codex/agents/gameplay-programmer.toml" {
		t.Fatalf("used %v", got)
	}
	// A new event reads again: an organisation's edit reaches the next event.
	f.files[".codex/studio-defaults.json"] = `{"requiredApprovals": 3}`
	if d, _, _ := New("acme/.github", f).ForEvent(nil).Defaults(ctx); d.RequiredApprovals != 3 {
		t.Fatalf("next event: %+v", d)
	}
}

func TestUnusableDefaultsSayWhereAndHowToGoOn(t *testing.T) {
	t.Parallel()
	f := &repoFiles{files: map[string]string{".codex/studio-defaults.json": `{"requiredApprovals": 2, "modelTeir": "luna"}`}}
	_, _, err := New("acme/.github", f).ForEvent(nil).Defaults(context.Background())
	var ue *UnusableError
	if !errors.As(err, &ue) {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{"acme/.github .codex/studio-defaults.json", `"modelTeir"`, `Did you mean "modelTier"?`, "org-defaults: none"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestAForbiddenDefaultsRepositoryIsWarnedOfAndAnOutageIsAnError(t *testing.T) {
	t.Parallel()
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	f := &repoFiles{failWith: fmt.Errorf("GET: 403 Resource not accessible by integration: %w", hub.ErrForbidden)}
	if _, found, err := New("acme/.github", f).ForEvent(logf).Defaults(context.Background()); found || err != nil {
		t.Fatalf("%v %v", found, err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "cannot read the organisation's defaults in acme/.github") {
		t.Fatalf("logged %q", logged)
	}
	// Anything else is not "no defaults": the event fails and is retried, rather than running
	// without caps the organisation set.
	f.failWith = errors.New("GET: 502 Bad Gateway")
	if _, _, err := New("acme/.github", f).ForEvent(logf).Defaults(context.Background()); err == nil {
		t.Fatal("an outage must not read as no defaults")
	}
}

func TestRepoNameFromTheInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input, owner, want string
		on                 bool
		bad                bool
	}{
		{"", "acme", "acme/.github", true, false},
		{"none", "acme", "", false, false},
		{" Off ", "acme", "", false, false},
		{"acme/studio-policy", "acme", "acme/studio-policy", true, false},
		{"acme", "acme", "", false, true},
		{"acme/a/b", "acme", "", false, true},
		{"", "", "", false, false},
	} {
		got, on, err := RepoName(tc.input, tc.owner)
		if got != tc.want || on != tc.on || (err != nil) != tc.bad {
			t.Errorf("RepoName(%q, %q) = %q %v %v", tc.input, tc.owner, got, on, err)
		}
	}
	if !Layered(".codex/agents/x.toml") || Layered(".codex/agents/sub/x.toml") || Layered(".codex/studio.json") || !Layered(path.Join(".codex", "studio", "config.json")) {
		t.Fatal("Layered")
	}
}
