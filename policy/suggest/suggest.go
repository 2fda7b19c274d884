package suggest

import (
	"fmt"
	"slices"
	"strings"
)

// maxSuggestions bounds a hint: more names equally close than this are a list, not a guess.
const maxSuggestions = 3

// Closest returns the names typed is probably a misspelling of: those at the smallest distance
// (swapped neighbours count as one edit, as people type them), within two edits (one for words of
// four letters or fewer, where two reach too much), comparing case-insensitively and with '_' read
// as '-' (the seed's legacy role ids), in the order of names. An exact name, or a word of fewer
// than three letters, has no suggestion.
func Closest(typed string, names []string) []string {
	t := normalize(typed)
	if len([]rune(t)) < 3 {
		return nil
	}
	limit := 2
	if len([]rune(t)) <= 4 {
		limit = 1
	}
	var out []string
	best := limit + 1
	for _, n := range names {
		if n == typed {
			return nil
		}
		d := distance(t, normalize(n))
		switch {
		case d < best:
			best, out = d, []string{n}
		case d == best && !slices.Contains(out, n):
			out = append(out, n)
		}
	}
	if len(out) > maxSuggestions {
		return nil // a list, not a guess
	}
	return out
}

// DidYouMean is the hint for names, as a sentence that follows another (with a leading space);
// "" when there is none.
func DidYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	if len(quoted) == 1 {
		return " Did you mean " + quoted[0] + "?"
	}
	return " Did you mean " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1] + "?"
}

func normalize(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

// distance is the optimal string alignment distance between a and b, in runes: insertions,
// deletions, substitutions and transpositions of neighbours each cost one.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j]; three rows are enough for transpositions.
	prev2, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
