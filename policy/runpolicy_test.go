package policy

import (
	"reflect"
	"testing"
)

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

func TestFixPassesPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		input *int
		task  *int // runPolicy.maxFixPasses
		want  int
	}{
		{"neither set: the default", nil, nil, 1},
		{"task only", nil, intp(3), 3},
		{"task turns fixing off", nil, intp(0), 0},
		{"input only", intp(2), nil, 2},
		{"input wins over the task", intp(2), intp(4), 2},
		{"input 0 wins over the task", intp(0), intp(4), 0},
		{"input wins even when lower than the default", intp(0), nil, 0},
		{"task above the cap", nil, intp(9), MaxFixPassesCap},
		{"input above the cap", intp(100), nil, MaxFixPassesCap},
		{"input at the cap", intp(MaxFixPassesCap), intp(1), MaxFixPassesCap},
		{"negative input clamps to 0", intp(-1), intp(3), 0},
		{"negative task clamps to 0", nil, intp(-2), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := Task{RunPolicy: RunPolicy{MaxFixPasses: tt.task}}
			if got := FixPasses(tt.input, task); got != tt.want {
				t.Errorf("FixPasses = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestReviewEnabled(t *testing.T) {
	tests := []struct {
		review *bool
		want   bool
	}{
		{nil, true},
		{boolp(true), true},
		{boolp(false), false},
	}
	for _, tt := range tests {
		if got := ReviewEnabled(Task{RunPolicy: RunPolicy{Review: tt.review}}); got != tt.want {
			t.Errorf("ReviewEnabled(review=%v) = %v, want %v", tt.review, got, tt.want)
		}
	}
}

func TestVerificationForPrecedence(t *testing.T) {
	taskVerify := &Verification{Command: "go", Args: []string{"test", "./..."}}
	tests := []struct {
		name  string
		task  *Verification
		input []string
		want  *Verification
	}{
		{"neither: no verification", nil, nil, nil},
		{"empty input argv: no verification", nil, []string{}, nil},
		{"task only", taskVerify, nil, &Verification{Command: "go", Args: []string{"test", "./..."}}},
		{"task wins over the input", taskVerify, []string{"make", "check"}, &Verification{Command: "go", Args: []string{"test", "./..."}}},
		{"input only", nil, []string{"make", "check"}, &Verification{Command: "make", Args: []string{"check"}}},
		{"input program alone", nil, []string{"./verify.sh"}, &Verification{Command: "./verify.sh", Args: []string{}}},
		{"task without args", &Verification{Command: "true"}, []string{"make"}, &Verification{Command: "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := VerificationFor(Task{Verify: tt.task}, tt.input)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("VerificationFor = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestVerificationForCopies: the caller may change the result without changing the task or the
// input it came from.
func TestVerificationForCopies(t *testing.T) {
	task := Task{Verify: &Verification{Command: "go", Args: []string{"test"}}}
	v := VerificationFor(task, nil)
	v.Command, v.Args[0] = "rm", "-rf"
	if task.Verify.Command != "go" || task.Verify.Args[0] != "test" {
		t.Errorf("the task's verify changed: %+v", task.Verify)
	}
	input := []string{"make", "check"}
	v = VerificationFor(Task{}, input)
	v.Args[0] = "clean"
	if input[1] != "check" {
		t.Errorf("the input argv changed: %v", input)
	}
}
