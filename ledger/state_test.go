package ledger_test

import (
	"testing"

	"github.com/payout/payout/ledger"
)

// TestStateMeanings: what each state means, said once: accepted by the service, of unknown
// outcome, or final. A row is never both accepted and of unknown outcome.
func TestStateMeanings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state                           ledger.State
		accepted, outcomeUnknown, final bool
	}{
		{ledger.Ready, false, false, false},
		{ledger.Submitting, false, true, false},
		{ledger.Submitted, true, false, false},
		{ledger.Succeeded, true, false, true},
		{ledger.Failed, false, false, true},
		{ledger.Unknown, false, true, false},
		{ledger.Rejected, false, false, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			if got := tt.state.Accepted(); got != tt.accepted {
				t.Errorf("Accepted() = %t, want %t", got, tt.accepted)
			}
			if got := tt.state.OutcomeUnknown(); got != tt.outcomeUnknown {
				t.Errorf("OutcomeUnknown() = %t, want %t", got, tt.outcomeUnknown)
			}
			if got := tt.state.Final(); got != tt.final {
				t.Errorf("Final() = %t, want %t", got, tt.final)
			}
		})
	}
}
