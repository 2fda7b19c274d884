package prompts

import (
	"strings"
	"testing"
)

func TestCustomizationPrices(t *testing.T) {
	c, err := ParseCustomization([]byte(`{"schemaVersion":1,"prices":{"house-model":{"input":0.5,"cachedInput":0.05,"output":2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Prices["house-model"]; p != (CustomPrice{Input: 0.5, CachedInput: 0.05, Output: 2}) {
		t.Errorf("price = %+v", p)
	}
	for body, want := range map[string]string{
		`{"schemaVersion":1,"prices":{"m":{"input":-1}}}`:   "prices.m.input: must be US dollars per million tokens, 0 or more",
		`{"schemaVersion":1,"prices":{"m":{"inptu":1}}}`:    "unknown field",
		`{"schemaVersion":1,"prices":{" ":{"output":1}}}`:   "a model name must be non-empty",
		`{"schemaVersion":1,"prices":{"m":{"output":1e9}}}`: "prices.m.output",
	} {
		if _, err := ParseCustomization([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
