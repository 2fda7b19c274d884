package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The agent attacks the key-holding proxy from inside its call, as a real one could: it reads the
// proxy's address and its own model from its parent's command line and its per-call key from its
// environment, then asks for another model, a background response (unmetered) and a route that
// is not a model's. The proxy refuses each, and the run still ends done.
func TestAnAgentCannotStretchItsProxyKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	attack := `args=$(tr '\0' '\n' < /proc/$PPID/cmdline)
url=$(printf '%s\n' "$args" | sed -n 's/.*base_url="\([^"]*\)".*/\1/p' | head -n1)
model=$(printf '%s\n' "$args" | grep -A1 -x -- '--model' | tail -n1)
model=${model:-gpt-5.6-terra} # the app server takes the model as a thread parameter: guess the default
echo "proxy=$url model=$model key=${CODEX_STUDIO_PROXY_KEY:+present}" >&2
ask() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $CODEX_STUDIO_PROXY_KEY" -H 'Content-Type: application/json' -d "$2" "$url$1"; }
echo "other-model=$(ask /responses '{"model":"gpt-5.6-sol","input":"x"}')" >&2
echo "background=$(ask /responses "{\"model\":\"$model\",\"background\":true,\"input\":\"x\"}")" >&2
echo "files=$(ask /files '{}')" >&2
true`
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.codex.SetScript(fakecodex.Script{
		Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: attack}},
		Reviews: []fakecodex.Call{{FinalMessage: fakecodex.PassingReview}},
	})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	impl := stepStderr(t, w, "implementation")
	if !strings.Contains(impl, "proxy=http://127.0.0.1:") || strings.Contains(impl, "model= ") || !strings.Contains(impl, "key=present") {
		t.Fatalf("control: the attack did not find the proxy, its model and its key:\n%s", impl)
	}
	for _, want := range []string{"other-model=403", "background=403", "files=404"} {
		if !strings.Contains(impl, want) {
			t.Errorf("the proxy did not refuse the agent (%s):\n%s", want, impl)
		}
	}
}

// The agent sends a request of its own through the proxy with headers that would move the real
// key's spending and scope: an organization and a project of its choosing, a cookie, an X- header.
// The request is the agent's to make (its key and model are right), but the model API receives
// only the headers the studio sets.
func TestAnAgentCannotAddHeadersToTheRealKey(t *testing.T) {
	t.Parallel()
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{fakemodel.Reply(fakemodel.Message("hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	w := newWorld(t, nil)
	attack := `args=$(tr '\0' '\n' < /proc/$PPID/cmdline)
url=$(printf '%s\n' "$args" | sed -n 's/.*base_url="\([^"]*\)".*/\1/p' | head -n1)
model=$(printf '%s\n' "$args" | grep -A1 -x -- '--model' | tail -n1)
model=${model:-gpt-5.6-terra} # the app server takes the model as a thread parameter: guess the default
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $CODEX_STUDIO_PROXY_KEY" -H 'Content-Type: application/json' \
  -H 'OpenAI-Organization: org-attacker' -H 'OpenAI-Project: proj_attacker' -H 'Cookie: session=attacker' -H 'X-Attacker: 1' \
  -d "{\"model\":\"$model\",\"input\":\"x\"}" "$url/responses")
echo "with-headers=$code" >&2
true`
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.codex.SetScript(fakecodex.Script{
		Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: attack}},
		Reviews: []fakecodex.Call{{FinalMessage: fakecodex.PassingReview}},
	})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0", "INPUT_OPENAI-BASE-URL": model.URL})
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	reqs := model.Requests()
	// Control: the agent's request went through the proxy and reached the model API.
	if impl := stepStderr(t, w, "implementation"); !strings.Contains(impl, "with-headers=200") || len(reqs) != 1 {
		t.Fatalf("control: the agent's request did not reach the model API (%d requests):\n%s", len(reqs), impl)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+sandbox.OpenAIKey {
		t.Errorf("upstream Authorization = %q, want the real key", got)
	}
	for _, k := range []string{"OpenAI-Organization", "OpenAI-Project", "Cookie", "X-Attacker"} {
		if v := reqs[0].Header.Values(k); len(v) > 0 {
			t.Errorf("the model API got the agent's %s with the real key: %q", k, v)
		}
	}
}
