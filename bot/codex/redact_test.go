package codex

import (
	"bytes"
	"testing"
)

func TestRedact(t *testing.T) {
	r := NewRedactor("ghs_abcdef", "ghs_abcdef_longer", "", "x")
	tests := []struct{ in, want string }{
		{"token ghs_abcdef here", "token *** here"},
		{"ghs_abcdef_longer wins over its prefix", "*** wins over its prefix"},
		{"a short value like x is not masked", "a short value like x is not masked"},
		{"twice ghs_abcdef ghs_abcdef", "twice *** ***"},
	}
	for _, tc := range tests {
		if got := r.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var nilR *Redactor
	if got := nilR.Redact("ghs_abcdef"); got != "ghs_abcdef" {
		t.Errorf("nil redactor changed text: %q", got)
	}
}

func TestLineWriterCatchesSecretsSplitAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := NewRedactor("sk-secret-value").LineWriter(&out)
	for _, chunk := range []string{`{"a":"sk-sec`, `ret-value"}` + "\n" + `{"b":"sk-`, `secret-value`} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"a":"***"}` + "\n" + `{"b":"***`
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// A secret that exists only after the redactor was built (a refreshed installation token) is
// masked from the moment it is added, by writers already handed out too, and concurrent Adds
// and Redacts do not race.
func TestRedactorAddMasksLaterSecrets(t *testing.T) {
	r := NewRedactor("ghs_first_token")
	var out bytes.Buffer
	w := r.LineWriter(&out)
	r.Add("ghs_second_token", "ghs_second_token_longer", "", "ab")
	if _, err := w.Write([]byte("a ghs_first_token b ghs_second_token_longer c ghs_second_token ab\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "a *** b *** c *** ab\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			r.Add("ghs_concurrent_" + string(rune('a'+i%26)) + "xyz")
		}
	}()
	for i := 0; i < 200; i++ {
		_ = r.Redact("ghs_concurrent_axyz")
	}
	<-done
	if got := r.Redact("x ghs_concurrent_zxyz"); got != "x ***" {
		t.Errorf("got %q", got)
	}
	var nilR *Redactor
	nilR.Add("ghs_whatever") // a nil redactor stays a no-op
}
