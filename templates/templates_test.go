package templates_test

import (
	"testing"

	"github.com/payout/payout/templates"
)

func TestPagesParsedOnce(t *testing.T) {
	tests := []struct {
		name string
		page func() any
		want string
	}{
		{"run", func() any { return templates.Run() }, templates.RunPage},
		{"reconcile", func() any { return templates.Reconcile() }, templates.ReconcilePage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := tt.page(), tt.page(); a == nil || a != b {
				t.Fatalf("%s: template %v, second call %v: want the same parsed template", tt.want, a, b)
			}
		})
	}
	if templates.Run().Lookup("style") == nil || templates.Run().Lookup("states") == nil {
		t.Error("the shared partials are not in the pages' namespace")
	}
}
