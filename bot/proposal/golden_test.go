package proposal

import (
	"testing"

	"github.com/codex-studio/studio-action/internal/golden"
)

func checkGolden(t *testing.T, name, got string) { t.Helper(); golden.Check(t, name, got) }
