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

// Dependencies point inward: no package under bot/ imports bot, and bot/hub, the adapter,
// imports nothing of this module but policy, the pure bottom layer (what it needs of the bot is
// passed in).
func TestSubPackagesNeverImportTheFlow(t *testing.T) {
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || dir == "." || d.Name() == "testdata" {
			return err
		}
		for _, f := range parseDir(t, dir) {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == module+"/bot" {
					t.Errorf("bot/%s imports bot", dir)
				}
				if dir == "hub" && strings.HasPrefix(path, module+"/") && path != module+"/policy" {
					t.Errorf("bot/hub imports %s", path)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every GitHub call of an event goes through the event's memo (b.gh): the injected client
// (Deps.GitHub) is named only where the bot is built and where an event's memo is put in front
// of it. A step that called the client would read around what the event already knows.
func TestOnlyTheMemoCallsTheClient(t *testing.T) {
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
