package roles

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// files is a checkout as the roles read it.
type files map[string]string

func (f files) read(path string) ([]byte, error) {
	if s, ok := f[path]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

const customization = `{"schemaVersion":1,"policy":{"merge":"extend-only"},
 "roles":[{"id":"custom-boss-designer","displayName":"Boss Designer","promptFile":".codex/custom/roles/boss-designer.md",
   "contextStrategy":"focused","phase":"plan","modelTier":"luna","expectedOutputs":["Boss brief"],"reviewChecklist":["Phases are readable"]}]}`

func TestACheckoutWithoutCustomizationHasTheBuiltInRoles(t *testing.T) {
	t.Parallel()
	c, err := Load(files{}.read)
	if err != nil {
		t.Fatal(err)
	}
	if phase, ok := c.Lookup("gameplay-programmer"); !ok || phase != policy.PhaseForRole("gameplay-programmer") {
		t.Errorf("gameplay-programmer: %q %v", phase, ok)
	}
	if _, ok := c.Lookup("custom-boss-designer"); ok {
		t.Error("a custom role exists without a customization file")
	}
	if msg := c.UnknownRoleMessage("gameplay-programer"); !strings.Contains(msg, "gameplay-programmer") {
		t.Errorf("a misspelled role's refusal names no neighbour: %s", msg)
	}
}

func TestACustomRoleRunsInItsDeclaredPhaseAndTier(t *testing.T) {
	t.Parallel()
	c, err := Load(files{prompts.CustomizationPath: customization}.read)
	if err != nil {
		t.Fatal(err)
	}
	if phase, ok := c.Lookup("custom-boss-designer"); !ok || phase != policy.PhasePlan {
		t.Errorf("custom-boss-designer: %q %v, want the plan phase it declares", phase, ok)
	}
	rr, err := c.Resolve(policy.Task{Role: "custom-boss-designer"}, "studio:", nil, "")
	if err != nil || rr.ID != "custom-boss-designer" {
		t.Fatalf("resolve: %+v %v", rr, err)
	}
	fast, err := c.Route("custom-boss-designer", files{}.read, RouteInputs{})
	if err != nil {
		t.Fatal(err)
	}
	deep, err := c.Route("custom-boss-designer", files{}.read, RouteInputs{ModelTier: "sol"})
	if err != nil {
		t.Fatal(err)
	}
	if fast.Implementation.Tier == deep.Implementation.Tier {
		t.Errorf("the model-tier input changed nothing: %+v", fast.Implementation)
	}
}

func TestABadAgentFileIsARefusalNotAFailure(t *testing.T) {
	t.Parallel()
	c, err := Load(files{}.read)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Route("gameplay-programmer", files{".codex/agents/gameplay-programmer.toml": "model = [not toml"}.read, RouteInputs{})
	var refusal *RouteRefusal
	if !errors.As(err, &refusal) {
		t.Fatalf("err = %v, want a RouteRefusal the user can fix", err)
	}
	if _, err := c.Route("no-such-role", files{}.read, RouteInputs{}); !errors.As(err, &refusal) {
		t.Errorf("an unknown role: %v, want a RouteRefusal", err)
	}
}

func TestAMalformedCustomizationFileStopsTheLoad(t *testing.T) {
	t.Parallel()
	if _, err := Load(files{prompts.CustomizationPath: "{"}.read); err == nil {
		t.Error("a malformed customization file loaded")
	}
}
