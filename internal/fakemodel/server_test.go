package fakemodel

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, ctx context.Context, url, model string) *http.Response {
	t.Helper()
	body := strings.NewReader(`{"model":"` + model + `","stream":true,"input":[]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/responses", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	return resp
}

// sseTypes reads an SSE body and returns the event types and the data of each event.
func sseTypes(t *testing.T, r io.Reader) ([]string, []map[string]any) {
	t.Helper()
	var types []string
	var datas []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			types = append(types, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("data is not JSON: %v", err)
			}
			datas = append(datas, m)
		}
	}
	return types, datas
}

func TestStreamsTurnsInOrder(t *testing.T) {
	s, err := Start(Script{Turns: []Turn{
		Reply(Exec("c1", "echo hi")),
		{Items: []Item{Message("all done")}, Model: "gpt-5.5"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	resp := post(t, context.Background(), s.URL, "gpt-5.5")
	types, datas := sseTypes(t, resp.Body)
	resp.Body.Close()
	want := []string{"response.created", "response.output_item.added", "response.output_item.done", "response.completed"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Fatalf("turn 1 events = %v, want %v", types, want)
	}
	item := datas[2]["item"].(map[string]any)
	if item["name"] != "exec_command" || !strings.Contains(item["arguments"].(string), `"cmd":"echo hi"`) {
		t.Errorf("turn 1 item = %v", item)
	}

	resp = post(t, context.Background(), s.URL, "gpt-5.5")
	types, datas = sseTypes(t, resp.Body)
	resp.Body.Close()
	var text strings.Builder
	for i, ty := range types {
		if ty == "response.output_text.delta" {
			text.WriteString(datas[i]["delta"].(string))
		}
	}
	if text.String() != "all done" {
		t.Errorf("deltas = %q, want %q", text.String(), "all done")
	}

	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Turn != 0 || reqs[1].Turn != 1 || reqs[0].Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("recorded = %+v", reqs)
	}
	if s.Remaining() != 0 {
		t.Errorf("Remaining = %d", s.Remaining())
	}
}

func TestErrorTurns(t *testing.T) {
	tests := []struct {
		name       string
		script     Script
		model      string
		wantStatus int
		wantMsg    string
	}{
		{"unavailable model", Script{Unavailable: []string{"gpt-5.6-sol"}, Turns: []Turn{Reply(Message("x"))}}, "gpt-5.6-sol", 404, "model gpt-5.6-sol is not available for this account"},
		{"wrong model", Script{Turns: []Turn{{Model: "gpt-5.5", Items: []Item{Message("x")}}}}, "gpt-5.4", 400, "turn 0 expects model gpt-5.5, got gpt-5.4"},
		{"exhausted", Script{}, "gpt-5.5", 400, "script exhausted after 0 turns"},
		{"scripted status", Script{Turns: []Turn{{HTTPStatus: 500}}}, "gpt-5.5", 500, "scripted error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(tc.script)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			resp := post(t, context.Background(), s.URL, tc.model)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || !strings.Contains(string(data), tc.wantMsg) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, data, tc.wantStatus, tc.wantMsg)
			}
		})
	}
}

func TestRefuseAnswersEveryRequest(t *testing.T) {
	s, err := Start(Script{Refuse: &Refusal{HTTPStatus: http.StatusUnauthorized, Body: InvalidKey("sk-CANA***2b").Body}, Turns: []Turn{Reply(Message("never served"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 3; i++ { // Codex retries a 401: every retry must be refused too
		resp := post(t, context.Background(), s.URL, "gpt-5.5")
		var body struct {
			Error struct{ Message, Type, Code string }
		}
		err := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusUnauthorized || body.Error.Code != "invalid_api_key" || !strings.Contains(body.Error.Message, "Incorrect API key provided: sk-CANA***2b") {
			t.Fatalf("request %d: %d %+v (%v)", i, resp.StatusCode, body, err)
		}
	}
	if len(s.Requests()) != 3 || s.Remaining() != 1 {
		t.Errorf("requests %d, remaining turns %d: a refusal must not consume turns", len(s.Requests()), s.Remaining())
	}
}

func TestUnavailableDoesNotConsumeTurn(t *testing.T) {
	s, err := Start(Script{Unavailable: []string{"gpt-5.6-sol"}, Turns: []Turn{Reply(Message("fallback answered"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp := post(t, context.Background(), s.URL, "gpt-5.6-sol")
	resp.Body.Close()
	resp = post(t, context.Background(), s.URL, "gpt-5.5")
	types, _ := sseTypes(t, resp.Body)
	resp.Body.Close()
	if len(types) == 0 || types[len(types)-1] != "response.completed" || s.Remaining() != 0 {
		t.Errorf("fallback request got %v, remaining %d", types, s.Remaining())
	}
}

func TestTruncateDropsCompleted(t *testing.T) {
	s, err := Start(Script{Turns: []Turn{{Items: []Item{Message("cut")}, Truncate: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp := post(t, context.Background(), s.URL, "gpt-5.5")
	types, _ := sseTypes(t, resp.Body)
	resp.Body.Close()
	if types[len(types)-1] == "response.completed" {
		t.Errorf("truncated turn still completed: %v", types)
	}
}

func TestHangHoldsUntilClientLeaves(t *testing.T) {
	s, err := Start(Script{Turns: []Turn{{Hang: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, s.URL, "gpt-5.5")
	defer resp.Body.Close()
	done := make(chan []string, 1)
	go func() {
		var types []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "event: ") {
				types = append(types, strings.TrimPrefix(line, "event: "))
			}
		}
		done <- types
	}()
	<-s.Hanging()
	select {
	case types := <-done:
		t.Fatalf("hanging stream ended early: %v", types)
	default:
	}
	cancel()
	if types := <-done; len(types) != 1 || types[0] != "response.created" {
		t.Errorf("hanging stream sent %v, want only response.created", types)
	}
}

func TestModelsListing(t *testing.T) {
	s, err := Start(Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(data), `"object":"list"`) {
		t.Errorf("models = %d %s", resp.StatusCode, data)
	}
}
