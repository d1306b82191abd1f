package approval

import "testing"

// TestIsMaker: a principal names the account that made a file when it is that account's name, or
// that name before an "@"; an unknown maker names nobody.
func TestIsMaker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		principals []string
		maker      string
		want       bool
	}{
		{[]string{"alice"}, "alice", true},
		{[]string{"bob@example.com", "alice@example.com"}, "alice", true},
		{[]string{"alice.tan@example.com"}, "alice", false},
		{[]string{"malice@example.com"}, "alice", false},
		{[]string{"alice@example.com"}, "", false},
	} {
		if got := isMaker(tc.principals, tc.maker); got != tc.want {
			t.Errorf("isMaker(%q, %q) = %v, want %v", tc.principals, tc.maker, got, tc.want)
		}
	}
}
