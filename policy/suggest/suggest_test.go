package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"gameplay-programmer", "game-designer", "qa-playtester", "producer", "run", "review", "revoke", "help"}
	tests := []struct {
		typed string
		want  []string
	}{
		{"gameplay-programer", []string{"gameplay-programmer"}},  // a letter left out
		{"Gameplay-Programmer", []string{"gameplay-programmer"}}, // case
		{"qa_playtester", []string{"qa-playtester"}},             // the seed's legacy underscore
		{"prodcuer", []string{"producer"}},                       // two letters swapped
		{"rum", []string{"run"}},
		{"reviwe", []string{"review"}}, // revoke is two edits away, review one
		{"revew", []string{"review"}},
		{"hlp", []string{"help"}},
		{"wizard", nil},
		{"xy", nil}, // too short to guess from: every two-letter word is close to something
		{"", nil},
		{"run", nil}, // an exact name is no misspelling
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			if got := Closest(tt.typed, names); !slices.Equal(got, tt.want) {
				t.Errorf("Closest(%q) = %q, want %q", tt.typed, got, tt.want)
			}
		})
	}
}

// Names equally close are all suggested, in their order; too many are none.
func TestClosestTies(t *testing.T) {
	if got := Closest("cart", []string{"cars", "care", "dog"}); !slices.Equal(got, []string{"cars", "care"}) {
		t.Errorf("ties = %q", got)
	}
	if got := Closest("cart", []string{"cars", "care", "card", "cast"}); got != nil {
		t.Errorf("four ties = %q, want none", got)
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"run"}, ` Did you mean "run"?`},
		{[]string{"review", "revoke"}, ` Did you mean "review" or "revoke"?`},
		{[]string{"a", "b", "c"}, ` Did you mean "a", "b" or "c"?`},
	} {
		if got := DidYouMean(tt.names); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"producer", "prodcuer", 1}, {"run", "run", 0}, {"é", "e", 1},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
