package bot

import (
	"os"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/egress"
)

// Network is the run's egress proxy (codex.Egress) as the flow uses it: it sets the run's hosts
// once studio.json and the task are read, gives the verification the same way out as Codex, and
// reports what was blocked.
type Network interface {
	Configure(codex.NetworkConfig)
	For(jail.Jail) *jail.Network
	Blocks() egress.Blocks
	Allowed() map[string]int
}

// NetworkSettings are the `network` and `allow-hosts` inputs (checked in cmd).
type NetworkSettings struct {
	// NetworkMode wins over studio.json's network.mode; "" takes it, else allow-list.
	NetworkMode string
	// AllowHosts are added to the repository's hosts.
	AllowHosts []string
}

// configureNetwork decides the network of a step of phase, tells the proxy, and puts the line
// that says it on the status. studio.json and the task block were checked when they were read, so
// their entries parse.
func (r *run) configureNetwork(tc taskContext, phase policy.Phase, elig policy.Eligibility) {
	if r.cfg.Network == nil {
		return
	}
	mode := egress.DefaultMode
	for _, m := range []string{r.cfg.NetworkMode, tc.cfg.Network.Mode} {
		if m != "" {
			mode, _ = egress.ParseMode(m)
			break
		}
	}
	var src egress.Sources
	var ecosystems []string
	if tc.cfg.Network.RecommendedOn() {
		src.Recommended, ecosystems = egress.Recommended(rootNames(r.cfg.WorkDir))
	}
	src.Repository, _ = egress.ParseList(tc.cfg.Network.AllowHosts)
	src.Input, _ = egress.ParseList(r.cfg.AllowHosts)
	src.Task, _ = egress.ParseList(tc.task.AllowHosts)
	src.TaskAccepted = egress.TaskHostsCount(tc.cfg.StudioMode == policy.ModeStrictStudio,
		elig.Provenance == policy.ProvenanceApproval, phase == policy.PhasePlan)
	allow, notes := egress.Effective(src)
	r.cfg.Network.Configure(codex.NetworkConfig{Mode: mode, Allow: allow})
	r.st.Network = texts.NetworkLine(mode, allow, ecosystems, notes, r.cfg.Network.For(r.cfg.Jail) != nil)
}

// rootNames are the names at the workspace's root, where the ecosystems' files are looked for.
func rootNames(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// networkNote is what the end of a run says of the network: the blocks, and whether one may
// explain a failed verification.
func (r *run) networkNote(out codex.Outcome) string {
	if r.cfg.Network == nil {
		return ""
	}
	blocks := r.cfg.Network.Blocks()
	if r.impl != nil && r.impl.ev != nil {
		// The evidence counts what the network did: every block (the kept ones in full) and the
		// connections let through, by host.
		_ = r.impl.ev.WriteJSON("network.json", networkEvidence{
			Blocked: blocks.Total, NotListed: blocks.Dropped, Blocks: blocks.Kept(), Allowed: r.cfg.Network.Allowed(),
		})
	}
	return texts.NetworkBlocks(blocks, verificationFailed(out))
}

// networkEvidence is the run's network.json.
type networkEvidence struct {
	Blocked   int            `json:"blocked"`
	NotListed int            `json:"notListed"`
	Blocks    []egress.Block `json:"blocks"`
	Allowed   map[string]int `json:"allowed"`
}

// verificationFailed reports whether the run's last verification failed.
func verificationFailed(out codex.Outcome) bool {
	last := out.Verification
	for _, p := range out.FixPasses {
		if p.Verification != nil {
			last = p.Verification
		}
	}
	return last != nil && last.Failed()
}

// verifyNetwork is the verification's way out: the same as the Codex calls'.
func (r *run) verifyNetwork() *jail.Network {
	if r.cfg.Network == nil {
		return nil
	}
	return r.cfg.Network.For(r.cfg.Jail)
}
