package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The objective hash (identity.go) is the seed's and covers only the role, title, writeFiles,
// approval scopes, stage and mode. Everything else the implementation obeys (verify, runPolicy,
// files, the description Codex reads) is in the issue body, which its author can edit after a
// writer approved the plan. The task digest binds an approval to the exact text that was planned.

// ReasonTaskChanged is why an approval does not start the implementation when the issue's title or
// body differs from what the plan was made for.
const ReasonTaskChanged = "task changed since the plan (title or body edited); run /studio run to plan again"

// TaskDigest is the lower-case hex sha256 of an issue's title and full body, exactly as written (no
// normalization: any edit, even whitespace in a verify argv, must invalidate the approval). The
// title is length-prefixed so no title/body split can collide with another.
func TaskDigest(title, body string) string {
	sum := sha256.Sum256([]byte("studio-task v1\n" + strconv.Itoa(len(title)) + "\n" + title + "\n" + body))
	return hex.EncodeToString(sum[:])
}

// PlanRecord is the authoritative identity of a plan: what the approval of the plan commit is for
// and who asked for it. The bot writes it only into the output of a check run on the plan commit,
// which a repository writer cannot forge (check runs are written by GitHub Apps, and the bot reads
// only its own app's); the pull request body's marker is for humans and is never trusted.
type PlanRecord struct {
	Version         int    `json:"v"`
	ObjectiveSHA256 string `json:"sha256"`
	TaskDigest      string `json:"taskDigest"`
	Issue           int    `json:"issue"`
	RequestedBy     string `json:"requestedBy"`
}

const planRecordPrefix = "<!-- studio:plan "

// ErrNoPlanRecord means a check run's summary holds no plan record.
var ErrNoPlanRecord = errors.New("no studio plan record")

func (p PlanRecord) validate() error {
	switch {
	case p.Version != 1:
		return fmt.Errorf("studio plan record: version %d is not 1", p.Version)
	case !sha256Hex.MatchString(p.ObjectiveSHA256):
		return errors.New("studio plan record: sha256 must be 64 lower-case hex digits")
	case !sha256Hex.MatchString(p.TaskDigest):
		return errors.New("studio plan record: taskDigest must be 64 lower-case hex digits")
	case p.Issue < 1:
		return errors.New("studio plan record: issue must be positive")
	case !githubLogin.MatchString(p.RequestedBy):
		return fmt.Errorf("studio plan record: requestedBy %q is not a GitHub login", truncateForMessage(p.RequestedBy, 60))
	}
	return nil
}

// Render returns the record's line, `<!-- studio:plan {...} -->`. It fails rather than write a
// record it would refuse to parse.
func (p PlanRecord) Render() (string, error) {
	p.Version = 1
	if err := p.validate(); err != nil {
		return "", err
	}
	data, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode studio plan record: %w", err)
	}
	return planRecordPrefix + string(data) + " -->", nil
}

// ParsePlanRecord reads the first record line of a check run summary; unknown fields, a second
// value, any invalid field or any other spelling than Render's are errors, never skipped.
func ParsePlanRecord(summary string) (PlanRecord, error) {
	var line string
	for _, l := range strings.Split(summary, "\n") {
		if l = strings.TrimSuffix(l, "\r"); strings.HasPrefix(l, planRecordPrefix) {
			line = l
			break
		}
	}
	if line == "" {
		return PlanRecord{}, ErrNoPlanRecord
	}
	payload, ok := strings.CutSuffix(strings.TrimPrefix(line, planRecordPrefix), " -->")
	if !ok {
		return PlanRecord{}, errors.New("studio plan record: the line must end with ` -->`")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(payload)))
	dec.DisallowUnknownFields()
	var p PlanRecord
	if err := dec.Decode(&p); err != nil {
		return PlanRecord{}, fmt.Errorf("studio plan record: %w", err)
	}
	if dec.More() {
		return PlanRecord{}, errors.New("studio plan record: trailing data after the JSON object")
	}
	if err := p.validate(); err != nil {
		return PlanRecord{}, err
	}
	// encoding/json matches keys case-insensitively and lets a repeated key win, so "shA256" or a
	// second "sha256" would be read; only the one spelling Render writes is a record.
	if canon, err := json.Marshal(p); err != nil || string(canon) != payload {
		return PlanRecord{}, errors.New("studio plan record: not in the form the studio writes (its keys, once each, in order, without spaces)")
	}
	return p, nil
}

// Marker is the record as the pull request body's (informational) identity marker.
func (p PlanRecord) Marker() IdentityMarker {
	return IdentityMarker{ObjectiveSHA256: p.ObjectiveSHA256, Issue: p.Issue, RequestedBy: p.RequestedBy}
}
