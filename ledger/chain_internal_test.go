package ledger

import (
	"encoding/json"
	"maps"
	"testing"
)

// Facts are parsed back by any JSON reader: verify replays them against the payouts row.
func TestFactsTextIsJSONWithSortedKeys(t *testing.T) {
	in := map[string]string{"b": "quote \" backslash \\ tab \t nul \x00", "a": "Siti Nurhaliza — 日本", "c": "", "d": "</script>&"}
	got := factsJSON(in)
	if got[:5] != `{"a":` {
		t.Errorf("keys not sorted: %s", got)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	delete(in, "c")
	if !maps.Equal(back, in) {
		t.Errorf("read back %q, want %q", back, in)
	}
	if factsJSON(map[string]string{"x": ""}) != "" {
		t.Error("facts with nothing set are not empty")
	}
}
