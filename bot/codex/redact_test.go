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
