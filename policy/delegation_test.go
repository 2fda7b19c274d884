package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDelegationSchemaIsStrict checks the schema the way strict structured output reads it: valid
// JSON, every object closed and every property required, so a model cannot leave a key out.
func TestDelegationSchemaIsStrict(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(DelegationSchema), &schema); err != nil {
		t.Fatalf("DelegationSchema is not JSON: %v", err)
	}
	var walk func(path string, node map[string]any)
	objects := 0
	walk = func(path string, node map[string]any) {
		if node["type"] == "object" {
			objects++
			if node["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties must be false", path)
			}
			props, _ := node["properties"].(map[string]any)
			var required []string
			for _, r := range node["required"].([]any) {
				required = append(required, r.(string))
			}
			var keys []string
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			slices.Sort(required)
			if !reflect.DeepEqual(keys, required) {
				t.Errorf("%s: required %v, properties %v: strict mode wants every property required", path, required, keys)
			}
			for k, v := range props {
				walk(path+"."+k, v.(map[string]any))
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("$", schema)
	if objects != 2 {
		t.Errorf("found %d objects, want the answer and the request", objects)
	}
	// The schema and the parser name the same keys.
	for _, k := range append(slices.Clone(delegationFields), requestFields...) {
		if !strings.Contains(DelegationSchema, `"`+k+`"`) {
			t.Errorf("schema lacks %q", k)
		}
	}
}

func TestParseDelegation(t *testing.T) {
	ok := `{"summary": " Planned the jump. ", "delegate": [
	  {"role": "gameplay-programmer", "objective": "Add coyote time.\r\nKeep the jump height.", "writeFiles": ["./src/player/jump.gd", "src/player/jump.gd"], "files": ["docs/design.md"], "dependsOn": []},
	  {"role": "qa-playtester", "objective": "Playtest the jump.", "writeFiles": [], "files": [], "dependsOn": [0, 0]}
	]}`
	got, err := ParseDelegation("Here is my answer:\n```json\n" + ok + "\n```")
	if err != nil {
		t.Fatalf("ParseDelegation: %v", err)
	}
	want := Delegation{Summary: "Planned the jump.", Delegate: []DelegationRequest{
		{Role: "gameplay-programmer", Objective: "Add coyote time.\nKeep the jump height.", WriteFiles: []string{"src/player/jump.gd"}, Files: []string{"docs/design.md"}},
		{Role: "qa-playtester", Objective: "Playtest the jump.", DependsOn: []int{0}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseDelegation =\n%#v\nwant\n%#v", got, want)
	}

	none, err := ParseDelegation(`{"summary": "Nothing to split.", "delegate": []}`)
	if err != nil || len(none.Delegate) != 0 || none.Summary != "Nothing to split." {
		t.Errorf("an empty delegate: %#v, %v", none, err)
	}

	long, err := ParseDelegation(fmt.Sprintf(`{"summary": %q, "delegate": []}`, strings.Repeat("é", MaxDelegationSummary+5)))
	if err != nil || !strings.HasSuffix(long.Summary, "…") || len([]rune(long.Summary)) != MaxDelegationSummary+1 {
		t.Errorf("a long summary is cut, not refused: %d runes, %v", len([]rune(long.Summary)), err)
	}
}

func TestParseDelegationRefuses(t *testing.T) {
	req := func(fields string) string { return `{"summary": "s", "delegate": [` + fields + `]}` }
	good := `{"role": "gameplay-programmer", "objective": "o", "writeFiles": ["a.go"], "files": [], "dependsOn": []}`
	with := func(key, value string) string {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(good), &m)
		if value == "" {
			delete(m, key)
		} else {
			m[key] = json.RawMessage(value)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	many := strings.TrimSuffix(strings.Repeat(good+",", MaxDelegateRequests+1), ",")
	paths, _ := json.Marshal(make([]string, MaxDelegatePaths+1))
	tests := []struct {
		name, answer, want string
	}{
		{"no object", "I delegated nothing.", "holds no JSON object"},
		{"not JSON", `{"summary": }`, "not valid JSON"},
		{"missing delegate", `{"summary": "s"}`, `lacks the field "delegate"`},
		{"unknown top-level key", `{"summary": "s", "delegate": [], "extra": 1}`, "unknown field `extra`"},
		{"null summary", `{"summary": null, "delegate": []}`, "`summary` must be a string"},
		{"null delegate", `{"summary": "s", "delegate": null}`, "`delegate` must be an array"},
		{"delegate an object", `{"summary": "s", "delegate": {}}`, "`delegate` must be an array"},
		{"too many requests", req(many), "asks for 21 child tasks; at most 20"},
		{"request not an object", req(`"build it"`), "`delegate[0]` must be an object"},
		{"missing key", req(with("dependsOn", "")), "`delegate[0]` lacks the field \"dependsOn\""},
		{"unknown key", req(with("priority", "1")), "`delegate[0]` has the unknown field `priority`"},
		{"null role", req(with("role", "null")), "`delegate[0].role` must be a string"},
		{"empty role", req(with("role", `"  "`)), "`delegate[0].role` is empty"},
		{"role not an id", req(with("role", `"Lead Designer"`)), "must be a role id"},
		{"empty objective", req(with("objective", `""`)), "`delegate[0].objective` is empty"},
		{"long objective", req(with("objective", fmt.Sprintf("%q", strings.Repeat("x", MaxDelegateString+1)))), "longer than 2000 characters"},
		{"control characters", req(with("objective", `"a\u0000b"`)), "control characters"},
		{"null writeFiles", req(with("writeFiles", "null")), "`delegate[0].writeFiles` must be an array of strings"},
		{"writeFiles of numbers", req(with("writeFiles", "[1]")), "`delegate[0].writeFiles` must be an array of strings"},
		{"too many paths", req(with("files", string(paths))), "lists 51 paths; at most 50"},
		{"glob", req(with("writeFiles", `["src/**"]`)), "must be a literal relative file path, not a glob"},
		{"directory", req(with("writeFiles", `["src/"]`)), "must be a file path, not a directory"},
		{"traversal", req(with("files", `["../secrets"]`)), "parent traversal"},
		{"absolute", req(with("writeFiles", `["/etc/passwd"]`)), "path is absolute"},
		{"into .git", req(with("writeFiles", `[".GIT/config"]`)), "cannot target .git"},
		{"empty path", req(with("writeFiles", `[""]`)), "path is empty"},
		{"long path", req(with("files", fmt.Sprintf("[%q]", strings.Repeat("a", MaxDelegateString+1)))), "a path is longer than 2000 characters"},
		{"dependsOn itself", req(with("dependsOn", "[0]")), "`delegate[0].dependsOn`: 0 is not an earlier request"},
		{"dependsOn a later request", req(good + "," + with("dependsOn", "[2]") + "," + good), "`delegate[1].dependsOn`: 2 is not an earlier request"},
		{"dependsOn negative", req(good + "," + with("dependsOn", "[-1]")), "-1 is not an earlier request"},
		{"dependsOn an issue", req(good + "," + with("dependsOn", `["#12"]`)), "`delegate[1].dependsOn` must be an array of request indexes"},
		{"dependsOn a fraction", req(good + "," + with("dependsOn", `[0.5]`)), "must be an array of request indexes"},
		{"dependsOn null entry", req(good + "," + with("dependsOn", `[null]`)), "must be an array of request indexes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDelegation(tt.answer)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseDelegation error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
