// Package fakemodel is a scripted stand-in for the OpenAI Responses API, good enough for the real
// Codex CLI (0.171.0) to run against it offline. Each POST /v1/responses consumes the next scripted
// turn and streams it back as server-sent events in the shape Codex accepts; every request is
// recorded so tests can check what reached the model (headers, prompts, tool outputs). It is test
// infrastructure: production code must not import it.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Item is one Responses-API output item, as the model would emit it.
type Item map[string]any

// Exec is a shell tool call through Codex's exec_command function tool.
func Exec(callID, cmd string) Item {
	args, _ := json.Marshal(map[string]string{"cmd": cmd})
	return Item{"type": "function_call", "name": "exec_command", "call_id": callID, "arguments": string(args)}
}

// Patch is an apply_patch call; Codex declares apply_patch as a freeform custom tool, so the patch
// text is the input itself, not JSON arguments.
func Patch(callID, patch string) Item {
	return Item{"type": "custom_tool_call", "name": "apply_patch", "call_id": callID, "input": patch}
}

// Message is a final assistant message.
func Message(text string) Item {
	return Item{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}}
}

// Turn is the scripted answer to one request.
type Turn struct {
	Items []Item
	// Model, when set, must equal the request's model; a mismatch is answered with HTTP 400 so the
	// test sees which call went to the wrong model instead of a silently shifted script.
	Model string
	// HTTPStatus, when non-zero, answers with a plain JSON error instead of a stream.
	HTTPStatus int
	ErrorBody  any
	// Truncate drops response.completed, like a stream cut by the network.
	Truncate bool
	// Hang sends response.created and then holds the stream open until the client goes away or the
	// server closes: a model that never answers.
	Hang bool
	// Usage, when set, is the usage response.completed reports; nil reports 10 input tokens (none
	// cached) and 5 output tokens.
	Usage *Usage
}

// Usage is the token usage a turn's response.completed reports, as the Responses API does.
type Usage struct {
	InputTokens, CachedTokens, OutputTokens int
}

// Reply is a turn made of items.
func Reply(items ...Item) Turn { return Turn{Items: items} }

// Script configures a server.
type Script struct {
	Turns []Turn
	// Unavailable lists models that answer every request with a model-unavailable error, without
	// consuming a turn, the way the API refuses a model an account cannot use.
	Unavailable []string
	// Refuse, when set, answers every model request with this status and body, without consuming
	// a turn: an API that refuses the key, the model or the account whatever is asked, and keeps
	// refusing when Codex retries.
	Refuse *Refusal
}

// Refusal is an HTTP error answer of the API.
type Refusal struct {
	HTTPStatus int
	Body       any // nil: APIError("refused", "invalid_request_error", "refused")
}

// APIError is an error body shaped as the OpenAI API's: {"error":{"message","type","code"}}.
func APIError(message, typ, code string) map[string]any {
	return map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code}}
}

// InvalidKey is the API's answer to a key it does not know (HTTP 401), in its own words; the
// API quotes the key's first and last characters, as here.
func InvalidKey(maskedKey string) Refusal {
	return Refusal{HTTPStatus: http.StatusUnauthorized, Body: APIError(
		"Incorrect API key provided: "+maskedKey+". You can find your API key at https://platform.openai.com/account/api-keys.",
		"invalid_request_error", "invalid_api_key")}
}

// ModelNotFound is the API's answer to a model the account cannot use (HTTP 404).
func ModelNotFound(model string) Refusal {
	return Refusal{HTTPStatus: http.StatusNotFound, Body: APIError(
		"The model `"+model+"` does not exist or you do not have access to it.", "invalid_request_error", "model_not_found")}
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Model  string // from the JSON body, when present
	Turn   int    // index of the turn served, -1 when none was consumed
	// At is when the request's body had arrived: a benchmark times a steer to the request that
	// carries it.
	At time.Time
}

// Server is a running fake. Create it with Start.
type Server struct {
	URL string // base URL including /v1, as a provider base_url

	srv      *http.Server
	ln       net.Listener
	closed   chan struct{}
	once     sync.Once
	mu       sync.Mutex
	script   Script
	next     int
	requests []Request
	hanging  chan struct{} // receives one value each time a Hang turn starts holding
}

// Start listens on 127.0.0.1:0 and serves script until Close.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel listen: %w", err)
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String() + "/v1",
		ln:      ln,
		closed:  make(chan struct{}),
		script:  script,
		hanging: make(chan struct{}, 16),
	}
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server and releases hanging streams.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		_ = s.srv.Close()
	})
}

// Hanging delivers one value each time a Hang turn is holding its stream open, so a test can wait
// for that moment instead of sleeping.
func (s *Server) Hanging() <-chan struct{} { return s.hanging }

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining reports how many scripted turns were not consumed; tests assert 0 so a script that
// was longer than the conversation does not pass unnoticed.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Turns) - s.next
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Turn: -1, At: time.Now()}
	var parsed struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(body, &parsed) == nil {
		rec.Model = parsed.Model
	}

	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(rec)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "gpt-5.5", "object": "model", "created": 0, "owned_by": "fakemodel"}}})
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses"):
		s.record(rec)
		writeJSON(w, http.StatusNotFound, apiError("fakemodel: unsupported "+r.Method+" "+r.URL.Path, "not_found"))
		return
	}

	s.mu.Lock()
	if ref := s.script.Refuse; ref != nil {
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		body := ref.Body
		if body == nil {
			body = APIError("refused", "invalid_request_error", "refused")
		}
		writeJSON(w, ref.HTTPStatus, body)
		return
	}
	for _, m := range s.script.Unavailable {
		if m == rec.Model {
			s.requests = append(s.requests, rec)
			s.mu.Unlock()
			writeJSON(w, http.StatusNotFound, apiError(fmt.Sprintf("model %s is not available for this account", m), "model_not_found"))
			return
		}
	}
	if s.next >= len(s.script.Turns) {
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, apiError(fmt.Sprintf("fakemodel: script exhausted after %d turns", len(s.script.Turns)), "script_exhausted"))
		return
	}
	idx := s.next
	turn := s.script.Turns[idx]
	s.next++
	rec.Turn = idx
	s.requests = append(s.requests, rec)
	s.mu.Unlock()

	if turn.Model != "" && turn.Model != rec.Model {
		writeJSON(w, http.StatusBadRequest, apiError(fmt.Sprintf("fakemodel: turn %d expects model %s, got %s", idx, turn.Model, rec.Model), "wrong_model"))
		return
	}
	if turn.HTTPStatus != 0 {
		eb := turn.ErrorBody
		if eb == nil {
			eb = apiError("scripted error", "server_error")
		}
		writeJSON(w, turn.HTTPStatus, eb)
		return
	}
	s.stream(w, r, idx, turn)
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, idx int, turn Turn) {
	respID := fmt.Sprintf("resp_%d", idx+1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(ev map[string]any) {
		data, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	if turn.Hang {
		send(map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
		select {
		case s.hanging <- struct{}{}:
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	events := turnEvents(respID, turn.Items, turn.Usage)
	if turn.Truncate {
		events = events[:len(events)-1]
	}
	for _, ev := range events {
		send(ev)
	}
}

// turnEvents wraps items in the sequence documented in shared/reference/codex-cli.md §5:
// created, then per item added [+ text deltas] + done, then completed with usage.
func turnEvents(respID string, items []Item, usage *Usage) []map[string]any {
	if usage == nil {
		usage = &Usage{InputTokens: 10, OutputTokens: 5}
	}
	evs := []map[string]any{{"type": "response.created", "response": map[string]any{"id": respID}}}
	for i, it := range items {
		item := map[string]any{}
		for k, v := range it {
			item[k] = v
		}
		if _, ok := item["id"]; !ok {
			item["id"] = fmt.Sprintf("%s_item%d", respID, i)
		}
		if _, ok := item["status"]; !ok {
			item["status"] = "completed"
		}
		added := item
		if item["type"] == "message" {
			added = map[string]any{}
			for k, v := range item {
				added[k] = v
			}
			added["content"], added["status"] = []any{}, "in_progress"
		}
		evs = append(evs, map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
		if item["type"] == "message" {
			text := messageText(item)
			half := len(text) / 2
			for _, chunk := range []string{text[:half], text[half:]} {
				if chunk != "" {
					evs = append(evs, map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
						"output_index": i, "content_index": 0, "delta": chunk})
				}
			}
		}
		evs = append(evs, map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
	}
	return append(evs, map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID,
		"usage": map[string]any{"input_tokens": usage.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": usage.CachedTokens},
			"output_tokens": usage.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": usage.InputTokens + usage.OutputTokens},
	}})
}

func messageText(item map[string]any) string {
	var b strings.Builder
	parts, _ := item["content"].([]any)
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func apiError(msg, code string) map[string]any { return APIError(msg, "invalid_request_error", code) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(data))
}

func (s *Server) record(rec Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
}
