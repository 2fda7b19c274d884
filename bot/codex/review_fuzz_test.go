package codex

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseReview: the verdict parser never panics, and a verdict it accepts survives being
// rendered back to JSON and parsed again unchanged (parse, render, parse is a fixed point).
func FuzzParseReview(f *testing.F) {
	for _, s := range []string{
		`{"blockers":[],"warnings":[],"summary":"ok","needsFix":false}`,
		"Here you go:\n```json\n{\"blockers\":[\"missing test\"],\"warnings\":[],\"summary\":\"\",\"needsFix\":true}\n```",
		`{"blockers":[{"message":"m","file":"a.go","line":3},{"message":"n","file":null,"line":null}],"warnings":["w"],"summary":"s","needsFix":false}`,
		`{"blockers":null,"warnings":[],"summary":"","needsFix":false}`,
		`} {`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		v, err := ParseReview(out)
		if err != nil {
			return
		}
		if v.Blocks() != (v.NeedsFix || len(v.Blockers) > 0) {
			t.Fatalf("Blocks() = %v for %+v", v.Blocks(), v)
		}
		for _, b := range v.Blockers {
			if b.Line < 0 {
				t.Fatalf("negative line in %+v", b)
			}
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal %+v: %v", v, err)
		}
		again, err := ParseReview(string(data))
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("ParseReview(%s) = %+v, %v; want %+v", data, again, err, v)
		}
	})
}
