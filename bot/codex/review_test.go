package codex

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseReview(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Verdict
		wantErr string
	}{
		{
			name: "seed strings",
			in:   `{"blockers":["missing test"],"warnings":["slow"],"summary":"needs work","needsFix":true}`,
			want: Verdict{Blockers: []Blocker{{Message: "missing test"}}, Warnings: []string{"slow"}, Summary: "needs work", NeedsFix: true},
		},
		{
			name: "objects with file and line, and nulls from strict output",
			in:   `{"blockers":[{"message":"off by one","file":"src/jump.gd","line":12},{"message":"no docs","file":null,"line":null}],"warnings":[],"summary":"s","needsFix":true}`,
			want: Verdict{Blockers: []Blocker{{Message: "off by one", File: "src/jump.gd", Line: 12}, {Message: "no docs"}}, Warnings: []string{}, Summary: "s", NeedsFix: true},
		},
		{
			name: "prose and a code fence around the object (first { to last })",
			in:   "Here is my verdict:\n```json\n{\"blockers\":[],\"warnings\":[],\"summary\":\"ok\",\"needsFix\":false}\n```",
			want: Verdict{Blockers: []Blocker{}, Warnings: []string{}, Summary: "ok"},
		},
		{
			name: "extra keys are ignored",
			in:   `{"blockers":[],"warnings":[],"summary":"ok","needsFix":false,"score":9}`,
			want: Verdict{Blockers: []Blocker{}, Warnings: []string{}, Summary: "ok"},
		},
		{name: "no object", in: "LGTM", wantErr: "review output did not contain a JSON object"},
		{name: "empty", in: "", wantErr: "review output did not contain a JSON object"},
		{name: "broken JSON", in: `{"blockers": [}`, wantErr: "review JSON does not parse: "},
		{name: "blockers missing", in: `{"warnings":[],"summary":"","needsFix":false}`, wantErr: "review JSON blockers must be string[]"},
		{name: "blockers not an array", in: `{"blockers":"none","warnings":[],"summary":"","needsFix":false}`, wantErr: "review JSON blockers must be string[]"},
		{name: "blocker of a wrong type", in: `{"blockers":[3],"warnings":[],"summary":"","needsFix":false}`, wantErr: "review JSON blockers must be string[]"},
		{name: "blocker object without message", in: `{"blockers":[{"file":"a"}],"warnings":[],"summary":"","needsFix":false}`, wantErr: "review JSON blockers must be string[]"},
		{name: "warnings of objects", in: `{"blockers":[],"warnings":[{}],"summary":"","needsFix":false}`, wantErr: "review JSON warnings must be string[]"},
		{name: "summary missing", in: `{"blockers":[],"warnings":[],"needsFix":false}`, wantErr: "review JSON summary must be a string"},
		{name: "needsFix as string", in: `{"blockers":[],"warnings":[],"summary":"","needsFix":"no"}`, wantErr: "review JSON needsFix must be boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseReview(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseReview: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReviewSchemaIsStrictCompatible(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(ReviewSchema), &schema); err != nil {
		t.Fatalf("ReviewSchema is not JSON: %v", err)
	}
	// Strict structured output requires every property to be listed as required.
	var check func(path string, node map[string]any)
	check = func(path string, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		if props == nil {
			if items, ok := node["items"].(map[string]any); ok {
				check(path+"[]", items)
			}
			return
		}
		req, _ := node["required"].([]any)
		if len(req) != len(props) || node["additionalProperties"] != false {
			t.Errorf("%s: required %v must list all of %d properties and forbid others", path, req, len(props))
		}
		for k, v := range props {
			check(path+"."+k, v.(map[string]any))
		}
	}
	check("$", schema)
	// An answer that follows the schema must parse.
	if _, err := ParseReview(`{"blockers":[{"message":"m","file":null,"line":null}],"warnings":[],"summary":"s","needsFix":true}`); err != nil {
		t.Errorf("schema-shaped answer rejected: %v", err)
	}
}

func TestReviewOutcome(t *testing.T) {
	okRes := func(msg string) Execution {
		return Execution{Result: Result{Model: "gpt-5.6-terra", FinalMessage: msg}}
	}
	tests := []struct {
		name       string
		exe        Execution
		wantFailed bool
		wantLines  []string
	}{
		{
			name:      "passes",
			exe:       okRes(`{"blockers":[],"warnings":["w1"],"summary":"fine","needsFix":false}`),
			wantLines: []string{"review: exit=0 model=gpt-5.6-terra", "review summary: fine", "review needsFix: false", "review warnings:\n- w1"},
		},
		{
			name:       "blocks on a blocker with a location",
			exe:        okRes(`{"blockers":[{"message":"wrong jump height","file":"src/jump.gd","line":4}],"warnings":[],"summary":"no","needsFix":false}`),
			wantFailed: true,
			wantLines:  []string{"review: exit=0 model=gpt-5.6-terra", "review summary: no", "review needsFix: false", "review blockers:\n- src/jump.gd:4: wrong jump height"},
		},
		{
			name:       "blocks on needsFix alone",
			exe:        okRes(`{"blockers":[],"warnings":[],"summary":"redo","needsFix":true}`),
			wantFailed: true,
			wantLines:  []string{"review: exit=0 model=gpt-5.6-terra", "review summary: redo", "review needsFix: true"},
		},
		{
			name:       "malformed",
			exe:        okRes("looks good to me"),
			wantFailed: true,
			wantLines:  []string{"review: exit=0 model=gpt-5.6-terra", "review blocked: malformed review JSON (review output did not contain a JSON object)"},
		},
		{
			name:       "failed call",
			exe:        Execution{Result: Result{Model: "m", ExitCode: 1, Stderr: "boom\n"}},
			wantFailed: true,
			wantLines:  []string{"review: exit=1 model=m", "review stderr:\nboom", "review blocked: malformed review JSON (review exited with status 1)"},
		},
		{
			name:       "timed out",
			exe:        Execution{Result: Result{Model: "m", ExitCode: -1, Signal: "SIGTERM", TimedOut: true, Err: errors.New("codex timed out after 1s")}},
			wantFailed: true,
			wantLines:  []string{"review: exit=null signal=SIGTERM error=codex timed out after 1s model=m", "review blocked: malformed review JSON (codex timed out after 1s)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := NewReviewOutcome(tc.exe)
			if out.Failed() != tc.wantFailed {
				t.Errorf("Failed = %v, want %v", out.Failed(), tc.wantFailed)
			}
			if got := out.Lines(); !reflect.DeepEqual(got, tc.wantLines) {
				t.Errorf("lines\n got %q\nwant %q", got, tc.wantLines)
			}
		})
	}
}

func TestSplitBlockers(t *testing.T) {
	v := Verdict{Blockers: []Blocker{
		{Message: "in the diff", File: "src/jump.gd", Line: 7},
		{Message: "outside the hunks", File: "src/jump.gd", Line: 300},
		{Message: "file only", File: "src/jump.gd"},
		{Message: "no location"},
	}}
	inDiff := func(file string, line int) bool { return file == "src/jump.gd" && line >= 1 && line <= 20 }
	inline, body := v.SplitBlockers(inDiff)
	if len(inline) != 1 || inline[0].Message != "in the diff" {
		t.Errorf("inline = %+v", inline)
	}
	if len(body) != 3 || body[0].Message != "outside the hunks" || body[2].Message != "no location" {
		t.Errorf("body = %+v", body)
	}
	if inline, body := v.SplitBlockers(nil); len(inline) != 0 || len(body) != 4 {
		t.Errorf("without a diff everything goes to the body: %d inline, %d body", len(inline), len(body))
	}
}
