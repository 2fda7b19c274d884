package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ApprovalIdentity is what an approval is tied to (seed §4.3, §4.4): the role, the objective (the
// issue title), the approval scopes, the approved files (the task's writeFiles), the project stage
// and the studio mode. It is deliberately not tied to the issue number, the phase or a commit.
type ApprovalIdentity struct {
	Role           string
	Objective      string
	ApprovalScopes []string
	ApprovedFiles  []string
	ProjectStage   ProjectStage
	StudioMode     StudioMode
}

// TaskIdentity builds the identity of a task issue as the bot sees it now: the role it resolved
// (task block or label), the issue title, the block's approvalScope and writeFiles, and studio.json
// from the default branch.
func TaskIdentity(role, issueTitle string, task Task, cfg StudioConfig) ApprovalIdentity {
	return ApprovalIdentity{
		Role:           role,
		Objective:      issueTitle,
		ApprovalScopes: task.ApprovalScope,
		ApprovedFiles:  task.WriteFiles,
		ProjectStage:   cfg.Mode,
		StudioMode:     cfg.StudioMode,
	}
}

// CanonicalIdentity returns the seed's canonical JSON for an identity: normalized fields,
// keys sorted, compact, encoded the way JavaScript's JSON.stringify does (no HTML escaping).
func CanonicalIdentity(id ApprovalIdentity) (string, error) {
	role := strings.ToLower(trimJSSpace(id.Role))
	objective := collapseJSSpace(id.Objective)
	switch {
	case role == "":
		return "", errors.New("approval identity: role is required")
	case !utf8.ValidString(role) || !utf8.ValidString(objective):
		return "", errors.New("approval identity: role and objective must be valid UTF-8")
	case !ValidStage(id.ProjectStage):
		return "", fmt.Errorf("approval identity: project stage %q must be design, prototype, or development", id.ProjectStage)
	case !ValidMode(id.StudioMode):
		return "", fmt.Errorf("approval identity: studio mode %q must be fast-prototype, guided-studio, or strict-studio", id.StudioMode)
	}
	globs, err := NormalizeApprovalScope(id.ApprovalScopes, nil)
	if err != nil {
		return "", fmt.Errorf("approval identity: approvalScope: %w", err)
	}
	files, err := NormalizeApprovalScope(id.ApprovedFiles, nil)
	if err != nil {
		return "", fmt.Errorf("approval identity: writeFiles: %w", err)
	}
	for _, s := range slices.Concat(globs, files) {
		if !utf8.ValidString(s) {
			return "", errors.New("approval identity: paths must be valid UTF-8")
		}
	}
	// The object has only string and string-array values, so its keys are written in sorted
	// order by hand; this is the whole of the seed's recursive key sort for this shape.
	var b strings.Builder
	b.WriteString(`{"approvedFiles":`)
	writeJSStringArray(&b, files)
	b.WriteString(`,"approvedGlobs":`)
	writeJSStringArray(&b, globs)
	b.WriteString(`,"objective":`)
	writeJSString(&b, objective)
	b.WriteString(`,"projectStage":`)
	writeJSString(&b, string(id.ProjectStage))
	b.WriteString(`,"role":`)
	writeJSString(&b, role)
	b.WriteString(`,"studioMode":`)
	writeJSString(&b, string(id.StudioMode))
	b.WriteString(`}`)
	return b.String(), nil
}

// ObjectiveHash is the seed's canonicalObjectiveSha256: lower-case hex sha256 of CanonicalIdentity.
func ObjectiveHash(id ApprovalIdentity) (string, error) {
	canonical, err := CanonicalIdentity(id)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:]), nil
}

// collapseJSSpace is the seed's objective.trim().replace(/\s+/g, " ").
func collapseJSSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, isJSSpace), " ")
}

func writeJSStringArray(b *strings.Builder, items []string) {
	b.WriteByte('[')
	for i, s := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSString(b, s)
	}
	b.WriteByte(']')
}

// writeJSString quotes like JSON.stringify: only '"', '\\' and C0 controls are escaped (with the
// short forms where JSON has them); '<', '&', U+2028 and U+2029 stay literal, unlike encoding/json.
func writeJSString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// IdentityMarker is the hidden line the bot writes first in a plan pull request's body. It records
// the identity hash the plan was made for, the task issue, and who asked for the run (the person
// strict mode forbids from approving).
type IdentityMarker struct {
	ObjectiveSHA256 string
	Issue           int
	RequestedBy     string
}

const identityMarkerPrefix = "<!-- studio:identity "

var (
	identityMarkerLine = regexp.MustCompile(`^<!-- studio:identity v1 sha256=([a-f0-9]{64}) issue=([1-9][0-9]{0,9}) requested-by=(` + loginPattern + `) -->$`)
	sha256Hex          = regexp.MustCompile(`^[a-f0-9]{64}$`)
	githubLogin        = regexp.MustCompile(`^` + loginPattern + `$`)
)

// loginPattern is GitHub's login shape (alphanumerics and single inner hyphens, at most 39) with
// the optional `[bot]` suffix of app accounts, which may request runs when allow-listed.
const loginPattern = `[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}(?:\[bot\])?`

// ErrNoIdentityMarker means the body has no identity marker: it is not a plan pull request.
var ErrNoIdentityMarker = errors.New("the pull request body has no studio identity marker")

// Render returns the marker line. It fails rather than write a marker it would refuse to parse.
func (m IdentityMarker) Render() (string, error) {
	line := fmt.Sprintf("<!-- studio:identity v1 sha256=%s issue=%d requested-by=%s -->", m.ObjectiveSHA256, m.Issue, m.RequestedBy)
	if _, err := parseIdentityMarkerLine(line); err != nil {
		return "", err
	}
	return line, nil
}

// ParseIdentityMarker reads the first identity marker of a pull request body. Only the first one is
// looked at, because the bot writes its marker first and anything later (for example text Codex
// echoed into the plan) is not the bot's; a malformed first marker is an error, never skipped.
// The caller must pass only bodies of pull requests the bot opened, and should treat a body last
// edited by anyone else as having no trusted marker.
func ParseIdentityMarker(body string) (IdentityMarker, error) {
	i := strings.Index(body, identityMarkerPrefix)
	if i < 0 {
		return IdentityMarker{}, ErrNoIdentityMarker
	}
	if i > 0 && body[i-1] != '\n' {
		return IdentityMarker{}, errors.New("the studio identity marker must start a line")
	}
	line := body[i:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return parseIdentityMarkerLine(strings.TrimSuffix(line, "\r"))
}

func parseIdentityMarkerLine(line string) (IdentityMarker, error) {
	m := identityMarkerLine.FindStringSubmatch(line)
	if m == nil {
		return IdentityMarker{}, fmt.Errorf("malformed studio identity marker %q", truncateForMessage(line, 120))
	}
	issue, err := strconv.Atoi(m[2])
	if err != nil {
		return IdentityMarker{}, fmt.Errorf("malformed studio identity marker: issue %q", m[2])
	}
	return IdentityMarker{ObjectiveSHA256: m[1], Issue: issue, RequestedBy: m[3]}, nil
}

func truncateForMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
