package guidance

import (
	"testing"

	"github.com/codex-studio/studio-action/policy/routing"
)

func TestBindModel(t *testing.T) {
	terra := routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}
	tests := []struct {
		name, explicit, binding string
		want                    routing.ModelChoice
		wantModel               string
		bound                   bool
	}{
		{"no binding", "", "", terra, "", false},
		{"a built-in model replaces the surface's", "", "gpt-5.6-sol", routing.ModelChoice{Model: "gpt-5.6-sol", Effort: "medium"}, "", true},
		{"the model input still wins over a built-in binding", "my-model", "gpt-5.6-sol", routing.ModelChoice{Model: "gpt-5.6-sol", Effort: "medium"}, "my-model", true},
		{"another model runs as the model input would", "", "o9-custom", terra, "o9-custom", true},
		{"the model input wins over another model", "my-model", "o9-custom", terra, "my-model", false},
	}
	for _, tt := range tests {
		got, model, bound := BindModel(terra, tt.explicit, tt.binding)
		if got != tt.want || model != tt.wantModel || bound != tt.bound {
			t.Errorf("%s: BindModel = %+v, %q, %v; want %+v, %q, %v", tt.name, got, model, bound, tt.want, tt.wantModel, tt.bound)
		}
	}
	if got := ModelBinding(readProfile(t, "hybrid.json"), "scout"); got != "gpt-5.6-luna" {
		t.Errorf("ModelBinding(scout) = %q", got)
	}
	if got := ModelBinding(readProfile(t, "hybrid.json"), "producer"); got != "" {
		t.Errorf("ModelBinding of a role the profile lacks = %q", got)
	}
}
