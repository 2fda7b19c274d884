package prompts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// ContextStatus is the outcome for one requested context entry (seed §5.1).
type ContextStatus string

const (
	StatusSelected ContextStatus = "selected"
	StatusMissing  ContextStatus = "missing"
	StatusOmitted  ContextStatus = "omitted"
	StatusRejected ContextStatus = "rejected"
)

// ContextSafety classifies why an entry may or may not be shown to Codex.
type ContextSafety string

const (
	SafetySafe      ContextSafety = "safe"
	SafetyUnsafe    ContextSafety = "unsafe"
	SafetySecret    ContextSafety = "secret"
	SafetyGenerated ContextSafety = "generated"
	SafetyBinary    ContextSafety = "binary"
)

// The status reasons are part of the prompt and the status comment; tests pin them.
const (
	ReasonControlChars    = "path contains control characters"
	ReasonAbsolute        = "absolute paths are not allowed"
	ReasonTraversal       = "path traversal is not allowed"
	ReasonSecret          = "secret-like paths are not allowed"
	ReasonGenerated       = "generated or build output is not context"
	ReasonEscapesRoot     = "path escapes project root"
	ReasonRequiredMissing = "required context is missing"
	ReasonOptionalMissing = "optional context is missing"
	ReasonSymlinkOutside  = "symlink outside project root"
	ReasonNotAFile        = "context entry is not a file"
	ReasonUnreadable      = "context entry cannot be read"
	ReasonBinary          = "binary files are not context"
	ReasonPending         = "pending budget selection"
	ReasonEntryBudget     = "entry character budget exceeded"
	ReasonFileBudget      = "file count budget exceeded"
	ReasonTotalBudget     = "total character budget exceeded"
	ReasonSelected        = "selected within budget"
)

// ContextRequest asks for one project-relative file.
type ContextRequest struct {
	SourcePath string `json:"sourcePath"`
	Reason     string `json:"reason"`
	Required   bool   `json:"required"`
}

// ContextEntry is a request with its outcome; non-selected entries are the omission records.
type ContextEntry struct {
	SourcePath   string        `json:"sourcePath"`
	Reason       string        `json:"reason"`
	Required     bool          `json:"required"`
	Status       ContextStatus `json:"status"`
	StatusReason string        `json:"statusReason"`
	Safety       ContextSafety `json:"safety"`
	Chars        int           `json:"chars"`
}

// Budget bounds what a prompt may list.
type Budget struct {
	MaxFiles      int `json:"maxFiles"`
	MaxChars      int `json:"maxChars"`
	MaxEntryChars int `json:"maxEntryChars"`
}

// DefaultBudget is the seed's default: 12 files, 48,000 characters, 16,000 per entry.
func DefaultBudget() Budget { return Budget{MaxFiles: 12, MaxChars: 48_000, MaxEntryChars: 16_000} }

// BudgetUse is the budget with what the selection consumed.
type BudgetUse struct {
	Budget
	UsedFiles int `json:"usedFiles"`
	UsedChars int `json:"usedChars"`
}

// Selection is the result of SelectContext. Entries keep the request order (after deduplication).
type Selection struct {
	Entries  []ContextEntry `json:"entries"`
	Selected []string       `json:"selected"`
	Budget   BudgetUse      `json:"budget"`
}

// missing reports whether the selection asked for path and found no such file.
func (s Selection) missing(path string) bool {
	for _, e := range s.Entries {
		if e.SourcePath == path && e.Status == StatusMissing {
			return true
		}
	}
	return false
}

// Omissions returns every entry that was not selected, in request order.
func (s Selection) Omissions() []ContextEntry {
	var out []ContextEntry
	for _, e := range s.Entries {
		if e.Status != StatusSelected {
			out = append(out, e)
		}
	}
	return out
}

// Entry returns the entry for sourcePath (raw or normalized form).
func (s Selection) Entry(sourcePath string) (ContextEntry, bool) {
	for _, e := range s.Entries {
		if e.SourcePath == sourcePath {
			return e, true
		}
	}
	return ContextEntry{}, false
}

var (
	controlCharPattern = regexp.MustCompile(`[\x00-\x1f\x7f]`)
	// secretPathPattern is the seed's list, matched per segment as a substring and case-insensitively:
	// a false positive is a visible omission, a false negative could inline a credential.
	secretPathPattern = regexp.MustCompile(`(?i)(^|/)(?:\.env(?:\.[^/]*)?|\.npmrc|\.pypirc|id_(?:rsa|dsa|ecdsa|ed25519)|[^/]*(?:secret|credential|token|private[-_]?key|auth(?:entication)?)[^/]*)(/|$)`)
	// generatedPathPattern is case-sensitive like the seed; the .git variants are caught separately.
	generatedPathPattern = regexp.MustCompile(`(^|/)(dist|build|coverage|node_modules|\.git|\.codex/runs)(/|$)`)
	gitShortNamePattern  = regexp.MustCompile(`(?i)^git~[0-9]+$`)
	windowsVolumePattern = regexp.MustCompile(`^[A-Za-z]:`)
)

// isGeneratedPath applies the seed's generated-output rule plus the .git spellings a
// case-insensitive or 8.3 file system would resolve to the real .git directory.
func isGeneratedPath(p string) bool {
	if generatedPathPattern.MatchString(p) {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.EqualFold(strings.TrimRight(seg, ". "), ".git") || gitShortNamePattern.MatchString(seg) {
			return true
		}
	}
	return false
}

// NormalizeContextPath applies rules 1-5 of seed §5.2 to a raw project-relative path. It returns the
// normalized slash path, or a rejection (status, safety and reason) when a rule fires.
// Backslashes count as separators on every OS, so `..\x` cannot slip past a Linux runner.
func NormalizeContextPath(raw string) (normalized string, rejected *ContextEntry) {
	reject := func(safety ContextSafety, reason string) (string, *ContextEntry) {
		return "", &ContextEntry{SourcePath: raw, Status: StatusRejected, StatusReason: reason, Safety: safety}
	}
	if controlCharPattern.MatchString(raw) {
		return reject(SafetyUnsafe, ReasonControlChars)
	}
	slashed := strings.ReplaceAll(raw, `\`, "/")
	if filepath.IsAbs(raw) || strings.HasPrefix(slashed, "/") || windowsVolumePattern.MatchString(slashed) {
		return reject(SafetyUnsafe, ReasonAbsolute)
	}
	cleaned := path.Clean(slashed)
	if cleaned == ".." || strings.HasPrefix(cleaned, "../") {
		return reject(SafetyUnsafe, ReasonTraversal)
	}
	if secretPathPattern.MatchString(cleaned) {
		return reject(SafetySecret, ReasonSecret)
	}
	if isGeneratedPath(cleaned) {
		return reject(SafetyGenerated, ReasonGenerated)
	}
	return cleaned, nil
}

// SelectContext classifies and budgets requested context entries under root (seed §5.2-§5.3).
// It opens only the requested paths: it never lists a directory, so its cost does not depend
// on the size of the repository. Errors are reserved for a root that cannot be resolved and for
// cancellation; every per-entry problem becomes an entry status.
func SelectContext(ctx context.Context, root string, requests []ContextRequest, budget Budget) (Selection, error) {
	// The root is compared in its resolved form so a root reached through a symlink (a macOS
	// /tmp, a runner's mounted workspace) does not reject every entry (seed Appendix A.17).
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return Selection{}, fmt.Errorf("resolve project root %s: %w", root, err)
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return Selection{}, fmt.Errorf("resolve project root %s: %w", root, err)
	}
	seen := make(map[string]bool, len(requests))
	entries := make([]ContextEntry, 0, len(requests))
	for _, req := range requests {
		if seen[req.SourcePath] {
			continue
		}
		seen[req.SourcePath] = true
		if err := ctx.Err(); err != nil {
			return Selection{}, fmt.Errorf("select context: %w", err)
		}
		e := classifyEntry(realRoot, req, budget)
		e.Reason, e.Required = req.Reason, req.Required
		entries = append(entries, e)
	}

	candidates := make([]int, 0, len(entries))
	for i, e := range entries {
		if e.Status == StatusOmitted {
			candidates = append(candidates, i)
		}
	}
	sort.SliceStable(candidates, func(a, b int) bool {
		return entries[candidates[a]].Required && !entries[candidates[b]].Required
	})
	use := BudgetUse{Budget: budget}
	for _, i := range candidates {
		e := &entries[i]
		switch {
		case e.Chars > budget.MaxEntryChars:
			e.StatusReason = ReasonEntryBudget // required entries too: never forced in
		case use.UsedFiles >= budget.MaxFiles:
			e.StatusReason = ReasonFileBudget
		case use.UsedChars+e.Chars > budget.MaxChars:
			e.StatusReason = ReasonTotalBudget
		default:
			e.Status, e.StatusReason = StatusSelected, ReasonSelected
			use.UsedFiles++
			use.UsedChars += e.Chars
		}
	}
	sel := Selection{Entries: entries, Budget: use}
	for _, e := range entries {
		if e.Status == StatusSelected {
			sel.Selected = append(sel.Selected, e.SourcePath)
		}
	}
	return sel, nil
}

// classifyEntry applies rules 1-11 of seed §5.2 to one request; the first rule that fires wins.
func classifyEntry(realRoot string, req ContextRequest, budget Budget) ContextEntry {
	norm, rej := NormalizeContextPath(req.SourcePath)
	if rej != nil {
		return *rej
	}
	out := func(status ContextStatus, safety ContextSafety, reason string) ContextEntry {
		return ContextEntry{SourcePath: norm, Status: status, StatusReason: reason, Safety: safety}
	}
	abs := filepath.Join(realRoot, filepath.FromSlash(norm))
	if abs != realRoot && !strings.HasPrefix(abs, realRoot+string(filepath.Separator)) {
		return ContextEntry{SourcePath: req.SourcePath, Status: StatusRejected, StatusReason: ReasonEscapesRoot, Safety: SafetyUnsafe}
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		reason := ReasonRequiredMissing
		if !req.Required {
			// Appendix A.11: an optional entry says so instead of claiming to be required.
			reason = ReasonOptionalMissing
		}
		return out(StatusMissing, SafetySafe, reason)
	}
	if err != nil {
		return out(StatusRejected, SafetyUnsafe, ReasonUnreadable)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return out(StatusRejected, SafetyUnsafe, ReasonUnreadable)
	}
	if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
		return out(StatusRejected, SafetyUnsafe, ReasonSymlinkOutside)
	}
	// A symlink inside the root may still point at a secret or at .git; the rules apply to
	// where the bytes really live, not only to the name that was asked for.
	if rel, err := filepath.Rel(realRoot, real); err == nil && rel != "." {
		rel = filepath.ToSlash(rel)
		if secretPathPattern.MatchString(rel) {
			return out(StatusRejected, SafetySecret, ReasonSecret)
		}
		if isGeneratedPath(rel) {
			return out(StatusRejected, SafetyGenerated, ReasonGenerated)
		}
	}
	if !info.Mode().IsRegular() {
		return out(StatusRejected, SafetyUnsafe, ReasonNotAFile)
	}
	chars, binary, err := measureFile(real, info.Size(), budget)
	if err != nil {
		return out(StatusRejected, SafetyUnsafe, ReasonUnreadable)
	}
	if binary {
		return out(StatusRejected, SafetyBinary, ReasonBinary)
	}
	e := out(StatusOmitted, SafetySafe, ReasonPending)
	e.Chars = chars
	return e
}

// binarySniffBytes is how much of an oversized file is scanned for a NUL byte.
const binarySniffBytes = 8000

// measureFile returns the UTF-16 length of the file decoded as UTF-8 (the unit the seed's budget
// counts) and whether it holds a NUL byte. A file larger than 3 bytes per budgeted character
// can never fit the entry budget (a UTF-16 unit needs at least one byte, a BMP rune at most
// three), so only its head is sniffed and its byte size stands in as the character count:
// that keeps a stray multi-gigabyte file from being read whole (Appendix A.10).
func measureFile(name string, size int64, budget Budget) (chars int, binary bool, err error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	limit := int64(budget.MaxEntryChars)*3 + 1
	if budget.MaxEntryChars <= 0 || size <= limit {
		data, err := io.ReadAll(f)
		if err != nil {
			return 0, false, err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return 0, true, nil
		}
		return utf16Len(data), false, nil
	}
	head := make([]byte, binarySniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, false, err
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return 0, true, nil
	}
	return int(size), false, nil
}

// utf16Len counts UTF-16 code units of data decoded as UTF-8, with each invalid byte becoming
// one replacement character, as the seed's JavaScript string length does.
func utf16Len(data []byte) int {
	n := 0
	for len(data) > 0 {
		if data[0] < utf8.RuneSelf {
			n++
			data = data[1:]
			continue
		}
		r, size := utf8.DecodeRune(data)
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		data = data[size:]
	}
	return n
}
