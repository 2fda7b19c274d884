package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A seed project's `.codex/tasks.json` (v1 or v2, the seed's src/tasks.ts) read for `studio task
// import`, which opens one task issue per open task. The seed's normalization is applied as it
// applies it on every read: a string dependency is a task id, an object keeps its taskId, paths
// are literal, ids are unique.

// StoredTask is one task of a seed task store, as the import reads it.
type StoredTask struct {
	ID         string            `json:"id"`
	Title      string            `json:"title"`
	Role       string            `json:"role"`
	Status     string            `json:"status"`
	Files      []string          `json:"files"`
	WriteFiles []string          `json:"writeFiles"`
	DependsOn  []string          `json:"-"`
	WorkflowID string            `json:"workflowId"`
	GroupID    string            `json:"groupId"`
	Priority   float64           `json:"priority"`
	Verify     *Verification     `json:"verification"`
	Deps       []json.RawMessage `json:"dependencies"`
}

// storedStatuses are the seed's task statuses.
var storedStatuses = []string{"ready", "running", "blocked", "done", "cancelled", "skipped"}

// ParseTaskStore reads a seed task store: schemaVersion 1 or 2 and a tasks array, each task with
// an id, a title and one of the six statuses, its dependencies as ids, no id twice. The seed's
// errors: `Invalid task store JSON: …`, `Invalid task store schema`, `Duplicate task id`.
func ParseTaskStore(data []byte) ([]StoredTask, error) {
	var store struct {
		SchemaVersion int             `json:"schemaVersion"`
		Tasks         json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(data, &store); err != nil {
		return nil, fmt.Errorf("Invalid task store JSON: %v", err)
	}
	var tasks []StoredTask
	if (store.SchemaVersion != 1 && store.SchemaVersion != 2) || json.Unmarshal(store.Tasks, &tasks) != nil || tasks == nil {
		return nil, errors.New("Invalid task store schema")
	}
	seen := map[string]bool{}
	for i := range tasks {
		t := &tasks[i]
		t.ID, t.Title = strings.TrimSpace(t.ID), strings.TrimSpace(t.Title)
		if t.ID == "" || t.Title == "" {
			return nil, fmt.Errorf("task %d: `id` and `title` are required", i+1)
		}
		if seen[t.ID] {
			return nil, fmt.Errorf("Duplicate task id: %s", t.ID)
		}
		seen[t.ID] = true
		if !slices.Contains(storedStatuses, t.Status) {
			return nil, fmt.Errorf("task %s: status %q is not one of %s", t.ID, t.Status, strings.Join(storedStatuses, ", "))
		}
		for _, raw := range t.Deps {
			var id string
			var obj struct {
				TaskID string `json:"taskId"`
			}
			if json.Unmarshal(raw, &id) != nil {
				if json.Unmarshal(raw, &obj) != nil {
					return nil, fmt.Errorf("task %s: a dependency is neither a task id nor {taskId}", t.ID)
				}
				id = obj.TaskID
			}
			if id = strings.TrimSpace(id); id == "" {
				return nil, fmt.Errorf("task %s: a dependency's taskId is empty", t.ID)
			}
			if !slices.Contains(t.DependsOn, id) {
				t.DependsOn = append(t.DependsOn, id)
			}
		}
		t.Deps = nil
	}
	return tasks, nil
}

// TaskImport is what importing a store does: the tasks to open, in an order where each comes
// after its dependencies (each dependency on a task already done dropped, as it is met), and the
// tasks left out with why.
type TaskImport struct {
	Open    []StoredTask
	Skipped []string // "<id> (<why>)"
}

// PlanTaskImport orders the store's open tasks (ready, running, blocked) for creation. A done
// task is not opened and a dependency on it is met; a cancelled or skipped task is not opened,
// and neither is a task that depends on one (it could never start). A dependency on an unknown
// id is the seed's error (`Unknown dependency task: <id>`), and so is a cycle.
func PlanTaskImport(tasks []StoredTask) (TaskImport, error) {
	byID := map[string]StoredTask{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	var out TaskImport
	state := map[string]int{} // 0 unvisited, 1 visiting, 2 opened, 3 met (done), 4 left out
	var visit func(id string) error
	visit = func(id string) error {
		t, ok := byID[id]
		if !ok {
			return fmt.Errorf("Unknown dependency task: %s", id)
		}
		switch state[id] {
		case 1:
			return fmt.Errorf("task %s depends on itself through its dependencies", id)
		case 2, 3, 4:
			return nil
		}
		switch t.Status {
		case "done":
			state[id] = 3
			out.Skipped = append(out.Skipped, id+" (done)")
			return nil
		case "cancelled", "skipped":
			state[id] = 4
			out.Skipped = append(out.Skipped, id+" ("+t.Status+")")
			return nil
		}
		state[id] = 1
		var deps []string
		for _, d := range t.DependsOn {
			if err := visit(d); err != nil {
				return err
			}
			switch state[d] {
			case 4:
				state[id] = 4
				out.Skipped = append(out.Skipped, fmt.Sprintf("%s (its dependency %s is not opened)", id, d))
				return nil
			case 2:
				deps = append(deps, d)
			}
		}
		t.DependsOn = deps
		state[id] = 2
		out.Open = append(out.Open, t)
		return nil
	}
	for _, t := range tasks {
		if err := visit(t.ID); err != nil {
			return TaskImport{}, err
		}
	}
	return out, nil
}
