package policy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFitBody(t *testing.T) {
	note := NoteCutRunEvidence
	noteRunes := utf8.RuneCountInString(note)
	tests := []struct {
		name    string
		body    string
		cut     bool
		keptLen int // runes of body kept when cut
	}{
		{"empty", "", false, 0},
		{"short", "hello", false, 0},
		{"exactly the limit", strings.Repeat("x", MaxBodyChars), false, 0},
		{"exactly the limit in two-byte runes", strings.Repeat("ü", MaxBodyChars), false, 0},
		{"exactly the limit in four-byte runes", strings.Repeat("🎮", MaxBodyChars), false, 0},
		{"one over", strings.Repeat("x", MaxBodyChars+1), true, MaxBodyChars - noteRunes},
		{"one over in two-byte runes", strings.Repeat("ü", MaxBodyChars+1), true, MaxBodyChars - noteRunes},
		{"one over in four-byte runes", strings.Repeat("🎮", MaxBodyChars+1), true, MaxBodyChars - noteRunes},
		{"far over", strings.Repeat("ab", MaxBodyChars), true, MaxBodyChars - noteRunes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FitBody(tt.body, note)
			if n := utf8.RuneCountInString(got); n > MaxBodyChars {
				t.Fatalf("result has %d runes, over %d", n, MaxBodyChars)
			}
			if !tt.cut {
				if got != tt.body {
					t.Fatal("a body within the limit was changed")
				}
				return
			}
			kept, ok := strings.CutSuffix(got, note)
			if !ok {
				t.Fatal("the note is missing at the end")
			}
			if n := utf8.RuneCountInString(got); n != MaxBodyChars {
				t.Errorf("result has %d runes, want exactly %d (the cut wastes no room)", n, MaxBodyChars)
			}
			if n := utf8.RuneCountInString(kept); n != tt.keptLen || !strings.HasPrefix(tt.body, kept) {
				t.Errorf("kept %d runes of the body, want its first %d", n, tt.keptLen)
			}
			if !utf8.ValidString(got) {
				t.Error("the cut split a rune")
			}
		})
	}
}

// TestFitBodyCutsBetweenRunes: the cut lands on a mix of one- to four-byte runes at every offset
// and never leaves a partial one.
func TestFitBodyCutsBetweenRunes(t *testing.T) {
	for pad := range 4 {
		body := strings.Repeat("a", pad) + strings.Repeat("é€🎮x", MaxBodyChars/4+1)
		got := FitBody(body, "!")
		kept := strings.TrimSuffix(got, "!")
		if !utf8.ValidString(got) || !strings.HasPrefix(body, kept) || utf8.RuneCountInString(got) != MaxBodyChars {
			t.Errorf("pad %d: %d runes, valid %v, prefix %v", pad, utf8.RuneCountInString(got), utf8.ValidString(got), strings.HasPrefix(body, kept))
		}
	}
}

func TestFitBodyEdgeNotes(t *testing.T) {
	over := strings.Repeat("x", MaxBodyChars+10)
	if got := FitBody(over, ""); got != over[:MaxBodyChars] {
		t.Errorf("without a note: %d runes, want the first %d", utf8.RuneCountInString(got), MaxBodyChars)
	}
	longNote := strings.Repeat("n", MaxBodyChars+5)
	if got := FitBody(over, longNote); got != longNote[:MaxBodyChars] {
		t.Errorf("a note over the limit: %d runes, want it cut to %d", utf8.RuneCountInString(got), MaxBodyChars)
	}
	// Invalid bytes count as one rune each (each becomes one U+FFFD in JSON) and are kept as-is.
	invalid := strings.Repeat("\xff", MaxBodyChars+1)
	if got := FitBody(invalid, "!"); got != strings.Repeat("\xff", MaxBodyChars-1)+"!" {
		t.Errorf("invalid bytes: got %d bytes", len(got))
	}
}

func TestFitChars(t *testing.T) {
	tests := []struct {
		text, note string
		limit      int
		want       string
	}{
		{"héllo", "…", 5, "héllo"},
		{"héllo!", "…", 5, "héll…"},
		{"héllo!", "…", 2, "h…"},
		{"héllo!", "…", 1, "…"},
		{"héllo!", "…", 0, ""},
		{"héllo!", "…", -3, ""}, // no room at all (the rest of the body already fills it)
		{"héllo!", "[cut]", 3, "[cu"},
	}
	for _, tt := range tests {
		if got := FitChars(tt.text, tt.note, tt.limit); got != tt.want {
			t.Errorf("FitChars(%q, %q, %d) = %q, want %q", tt.text, tt.note, tt.limit, got, tt.want)
		}
	}
}

func TestFitCheckSummary(t *testing.T) {
	note := NoteCutRunEvidence
	tests := []struct {
		name string
		body string
		cut  bool
	}{
		{"exactly the limit", strings.Repeat("x", MaxCheckSummaryBytes), false},
		{"one byte over", strings.Repeat("x", MaxCheckSummaryBytes+1), true},
		// 32,768 two-byte runes: under the documented 65,535 characters but 65,536 bytes, which
		// GitHub refuses.
		{"characters within, bytes over", strings.Repeat("ü", 32768), true},
		{"four-byte runes over", strings.Repeat("🎮", 20000), true},
		{"four-byte runes within", strings.Repeat("🎮", 16383), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FitCheckSummary(tt.body, note)
			if len(got) > MaxCheckSummaryBytes {
				t.Fatalf("result has %d bytes, over %d", len(got), MaxCheckSummaryBytes)
			}
			if !tt.cut {
				if got != tt.body {
					t.Fatal("a summary within the limit was changed")
				}
				return
			}
			kept, ok := strings.CutSuffix(got, note)
			if !ok || !strings.HasPrefix(tt.body, kept) || !utf8.ValidString(got) {
				t.Fatalf("not a rune-aligned prefix plus the note (note present %v)", ok)
			}
			// As much as fits: one more rune of the body would overflow.
			next, _ := utf8.DecodeRuneInString(tt.body[len(kept):])
			if len(got)+utf8.RuneLen(next) <= MaxCheckSummaryBytes {
				t.Errorf("kept %d bytes; another rune would still fit", len(kept))
			}
		})
	}
}
