package main

import (
	"testing"

	"golang.org/x/time/rate"
)

// "inf" is the limiter's own "no limit", which the pool's sizing recognises; any other infinity
// would be taken for a finite rate and size the pool from it.
func TestRateInfIsNoLimit(t *testing.T) {
	for _, v := range []string{"inf", "Inf", "+Inf"} {
		r, err := parseRate(v)
		if err != nil || rate.Limit(r) != rate.Inf {
			t.Errorf("parseRate(%q) = %v, %v; want rate.Inf", v, r, err)
		}
	}
	if r, err := parseRate("50"); err != nil || r != 50 {
		t.Errorf("parseRate(50) = %v, %v", r, err)
	}
}
