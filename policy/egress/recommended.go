package egress

import (
	_ "embed"
	"encoding/json"
	"path"
	"sort"
	"strings"
)

// recommendedData is the table of ecosystems and the hosts each needs, a data file so that the
// docs and the code read the same list.
//
//go:embed recommended.json
var recommendedData []byte

// Ecosystem is one package ecosystem: the files at a repository's root that show it is used and
// the hosts its installs reach.
type Ecosystem struct {
	Name    string   `json:"name"`
	Markers []string `json:"markers"`
	Hosts   []string `json:"hosts"`
}

var ecosystems = func() []Ecosystem {
	var table struct {
		Ecosystems []Ecosystem `json:"ecosystems"`
	}
	if err := json.Unmarshal(recommendedData, &table); err != nil {
		panic("policy/egress: recommended.json: " + err.Error())
	}
	for _, e := range table.Ecosystems {
		if _, err := ParseList(e.Hosts); err != nil {
			panic("policy/egress: recommended.json: " + err.Error())
		}
	}
	return table.Ecosystems
}()

// Ecosystems is the whole table, for the docs and `studio doctor`.
func Ecosystems() []Ecosystem { return append([]Ecosystem{}, ecosystems...) }

// Recommended is the hosts of every ecosystem whose marker files are among rootNames (the names
// at the repository's root), and the names of those ecosystems.
func Recommended(rootNames []string) (List, []string) {
	var l List
	var used []string
	for _, e := range ecosystems {
		if !hasMarker(e.Markers, rootNames) {
			continue
		}
		hosts, _ := ParseList(e.Hosts)
		l = l.Merge(hosts)
		used = append(used, e.Name)
	}
	return l, used
}

func hasMarker(markers, names []string) bool {
	for _, m := range markers {
		for _, n := range names {
			if ok, _ := path.Match(m, n); ok {
				return true
			}
		}
	}
	return false
}

// Sources are where a run's allow-list comes from.
type Sources struct {
	// Recommended is on unless the repository turned it off.
	Recommended List
	// Repository is studio.json's network.allowHosts; Input the `allow-hosts` input.
	Repository, Input List
	// Task is the task block's allowHosts: untrusted text that a writer accepted by running it,
	// which counts only where TaskAccepted says so.
	Task List
	// TaskAccepted is the run's answer to "may this task's own hosts count" (TaskHostsCount).
	TaskAccepted bool
}

// Effective is the run's allow-list and, for the status comment, what was left out and why.
func Effective(s Sources) (List, []string) {
	l := s.Recommended.Merge(s.Repository).Merge(s.Input)
	var notes []string
	if s.Task.Len() > 0 {
		if s.TaskAccepted {
			l = l.Merge(s.Task)
		} else {
			notes = append(notes, "the task block's allowHosts ("+strings.Join(s.Task.Entries(), ", ")+") count only once the plan is approved")
		}
	}
	return l, notes
}

// TaskHostsCount decides whether a task block's own hosts count for a run: in a strict studio
// only for an implementation an approval authorized (the approval binds the text, hosts
// included), never for the plan pass; elsewhere whenever a writer started the run, as the task's
// writeFiles do.
func TaskHostsCount(strict, approvedImplementation, planPass bool) bool {
	switch {
	case planPass:
		return false
	case strict:
		return approvedImplementation
	}
	return true
}

// Names lists the entries of l sorted, for a stable line on the status comment.
func (l List) Names() []string {
	out := l.Entries()
	sort.Strings(out)
	return out
}
