package bot

import (
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
)

// The refusal note for each kind of refusal, against its golden file
// (testdata/golden/texts/refusal-<kind>.md), with the step annotation's line beside it.
func TestRefusalTextsMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	for _, ref := range []codex.APIRefusal{
		{Kind: codex.RefusedKey, Status: 401, Message: "Incorrect API key provided: sk-CANA***2b. You can find your API key at https://platform.openai.com/account/api-keys."},
		{Kind: codex.RefusedKey, Status: 403, Message: "Project does not have access to this region"},
		{Kind: codex.RefusedModel, Message: "The model `gpt-5.6-sol` does not exist or you do not have access to it.", Model: "gpt-5.6-sol"},
		{Kind: codex.RefusedEndpoint, Status: 404, Message: "404 page not found"},
		{Kind: codex.RefusedQuota, Message: "Quota exceeded. Check your plan and billing details."},
		{Kind: codex.RefusedRateLimit, Status: 429, Message: "exceeded retry limit, last status: 429 Too Many Requests"},
		{Kind: codex.RefusedUnreachable, Status: 502, Message: "model proxy: the model API at https://llm.example/v1 is unreachable: dial tcp: lookup llm.example: no such host"},
		{Kind: codex.RefusedServer, Message: "We’re currently experiencing high demand, which may cause temporary errors."},
		// The API's words cannot close the fence or start a workflow command of their own.
		{Kind: codex.RefusedServer, Status: 500, Message: "```\n::error::injected\n@everyone"},
	} {
		name := "refusal-" + string(ref.Kind)
		if ref.Kind == codex.RefusedKey {
			name += "-" + map[int]string{401: "401", 403: "403"}[ref.Status]
		}
		if ref.Status == 500 {
			name += "-hostile"
		}
		t.Run(name, func(t *testing.T) {
			checkGolden(t, "texts/"+name+".md", codex.RefusalNote(&ref, "/studio run")+"\n\n---\nstep annotation: "+codex.RefusalFailure(&ref)+"\n")
		})
	}
}
