package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// docsImpactPath is where a change states its documentation impact (seed `docs-impact`).
const docsImpactPath = "production/session-state/active.md"

// runDocsImpact is `studio docs-impact [--project P] [--base REF]`: functional changes since
// REF (default HEAD: the uncommitted ones) need a `## Documentation Impact` section.
func runDocsImpact(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("studio docs-impact", flag.ContinueOnError)
	project := fs.String("project", ".", "project root")
	base := fs.String("base", "HEAD", "the git ref the changes are counted from")
	if ok, code := parseFlags(fs, args, "studio docs-impact [--project DIR] [--base REF]",
		"Checks that the functional changes since a git ref (default HEAD: the uncommitted ones) state\ntheir documentation impact in "+docsImpactPath+" (`## Documentation Impact`).", stdout, stderr); !ok {
		return code
	}
	root, err := filepath.Abs(*project)
	if err != nil {
		fmt.Fprintf(stderr, "studio docs-impact: %v\n", err)
		return exitError
	}
	return printChecks(stdout, "docs-impact", docsImpactChecks(ctx, root, *base))
}

// functionalChange is the seed's rule for a change that may need documentation: source, assets
// and the engine's project files.
func functionalChange(p string) bool {
	return strings.HasPrefix(p, "src/") || strings.HasPrefix(p, "assets/") || p == "project.godot" || strings.HasSuffix(p, ".uproject")
}

var (
	impactDecision  = regexp.MustCompile(`(?m)^- Decision:\s*(updated|no-update)\s*$`)
	impactReason    = regexp.MustCompile(`(?m)^- Reason:\s*\S`)
	impactDocuments = regexp.MustCompile(`(?m)^- Documents:`)
)

// docsImpactChecks are project.documentation_impact.*: the changed paths since base (committed,
// uncommitted and untracked), and, when any is functional, the section's three lines.
func docsImpactChecks(ctx context.Context, root, base string) []check {
	const id = "project.documentation_impact"
	diff, err := localGit(ctx, root, "diff", "--name-only", base, "--")
	if err != nil {
		return []check{{"FAIL", id, fmt.Sprintf("cannot diff against %s: %v", base, err), ""}}
	}
	untracked, err := localGit(ctx, root, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return []check{{"FAIL", id, err.Error(), ""}}
	}
	var functional []string
	for _, p := range strings.Fields(diff + "\n" + untracked) {
		if functionalChange(p) {
			functional = append(functional, p)
		}
	}
	if len(functional) == 0 {
		return []check{{"PASS", id, "no functional change since " + base, ""}}
	}
	changed := fmt.Sprintf("%d functional %s since %s (%s)", len(functional), plural(len(functional), "change", "changes"), base, strings.Join(first(functional, 5), ", "))
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(docsImpactPath)))
	if err != nil {
		return []check{{"FAIL", id + ".section", changed + ": add a `## Documentation Impact` section", docsImpactPath}}
	}
	_, section, ok := strings.Cut(string(data), "## Documentation Impact")
	if !ok {
		return []check{{"FAIL", id + ".section", changed + ": add a `## Documentation Impact` section", docsImpactPath}}
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	checks := []check{{"PASS", id + ".section", changed, docsImpactPath}}
	for _, f := range []struct {
		name string
		re   *regexp.Regexp
		want string
	}{{"decision", impactDecision, "`- Decision: updated` or `- Decision: no-update`"}, {"reason", impactReason, "`- Reason: ...`"}, {"documents", impactDocuments, "`- Documents: ...`"}} {
		if f.re.MatchString(section) {
			checks = append(checks, check{"PASS", id + "." + f.name, "present", docsImpactPath})
		} else {
			checks = append(checks, check{"FAIL", id + "." + f.name, "the section needs " + f.want, docsImpactPath})
		}
	}
	return checks
}

func first(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], "...")
	}
	return xs
}
