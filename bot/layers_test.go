package bot

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/codex-studio/studio-action"

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// imports lists the module packages each non-test package under dir imports, keyed by its path
// relative to the module root ("bot/lock").
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != dir {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, f := range parseDir(t, path) {
			if _, ok := out[rel]; !ok {
				out[rel] = nil
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if rest, ok := strings.CutPrefix(p, module+"/"); ok {
					out[rel] = append(out[rel], rest)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// under says whether pkg is prefix or a package below it.
func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// The layers (docs/architecture.md): cmd -> bot -> its job packages -> policy, prompts, gitops,
// never back. Each rule names the packages it binds and what they may not import; every package a
// rule names must exist, so a rule cannot pass by having nothing left to check.
func TestLayers(t *testing.T) {
	t.Parallel()
	all := map[string][]string{}
	for _, dir := range []string{"../bot", "../gitops", "../policy", "../prompts"} {
		for pkg, imps := range imports(t, dir) {
			all[pkg] = imps
		}
	}
	rules := []struct {
		name string
		// binds the packages at or below these paths.
		binds []string
		// forbidden says whether an import is not allowed.
		forbidden func(imp string) bool
	}{
		{"no package under bot/ imports the flow", []string{"bot/texts", "bot/status", "bot/lock", "bot/ledger", "bot/roles", "bot/taskgraph", "bot/proposal", "bot/live", "bot/threads", "bot/orgdefaults", "bot/serve", "bot/hub", "bot/codex", "bot/jail", "bot/egress", "bot/ghapp", "bot/steplog"},
			func(imp string) bool { return imp == "bot" }},
		{"texts imports nothing of the studio but policy", []string{"bot/texts"},
			func(imp string) bool { return !under(imp, "policy") }},
		{"status, lock, ledger, roles, the live window, the kept threads and the organisation's defaults never import the task graph", []string{"bot/status", "bot/lock", "bot/ledger", "bot/roles", "bot/live", "bot/threads", "bot/orgdefaults"},
			func(imp string) bool { return under(imp, "bot/taskgraph") }},
		{"the adapter imports nothing of the studio but policy", []string{"bot/hub"},
			func(imp string) bool { return !under(imp, "policy") }},
		{"the product never imports the test wing", []string{"bot", "gitops", "policy", "prompts"},
			func(imp string) bool { return under(imp, "internal") }},
		{"policy and prompts never import bot or gitops", []string{"policy", "prompts"},
			func(imp string) bool { return under(imp, "bot") || under(imp, "gitops") }},
	}
	for _, rule := range rules {
		t.Run(rule.name, func(t *testing.T) {
			for _, b := range rule.binds {
				if _, ok := all[b]; !ok {
					t.Errorf("%s: no package %s", rule.name, b)
				}
			}
			for pkg, imps := range all {
				bound := false
				for _, b := range rule.binds {
					bound = bound || under(pkg, b)
				}
				if !bound {
					continue
				}
				for _, imp := range imps {
					if rule.forbidden(imp) {
						t.Errorf("%s imports %s", pkg, imp)
					}
				}
			}
		})
	}
}

// Every GitHub call of an event goes through the event's memo (b.gh): the injected client
// (Deps.GitHub) is named only where the bot is built and where an event's memo is put in front
// of it. A step that called the client would read around what the event already knows.
func TestOnlyTheMemoCallsTheClient(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"New": true, "forEvent": true}
	for _, f := range parseDir(t, ".") {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || allowed[fn.Name.Name] {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "GitHub" {
					t.Errorf("%s names the client (Deps.GitHub); use the event's memo", fn.Name.Name)
				}
				return true
			})
		}
	}
}
